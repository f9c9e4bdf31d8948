package dev.idem.spring.messaging.inboxtx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.StoreException;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.spring.internal.JoinedHandler;
import dev.idem.spring.outbox.SpringInboxTransactions;
import dev.idem.test.TestPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link SpringInboxTransactions} on H2: the work runs in a Spring transaction on its connection, which commits when
 * the work returns and rolls back on whatever it throws or when it marked the transaction rollback-only; and which
 * transaction manager the starter's inbox takes when the application has several, or none of its data source.
 */
class SpringInboxTransactionsTest {
  private DataSource dataSource;
  private JdbcTemplate jdbc;
  private JdbcInboxStore store;
  private final List<String> completions = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    dataSource = h2();
    jdbc = new JdbcTemplate(dataSource);
    jdbc.execute("CREATE TABLE inboxtx_row (id VARCHAR(64) NOT NULL)");
    store = JdbcInboxStore.builder(dataSource).build();
  }

  private static DataSource h2() {
    return new DriverManagerDataSource("jdbc:h2:mem:inboxtx-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
  }

  private int rows(String id) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM inboxtx_row WHERE id = ?", Integer.class, id);
  }

  /** Records how the active Spring transaction ends. */
  private void recordCompletion() {
    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
      @Override
      public void afterCompletion(int status) {
        completions.add(status == STATUS_COMMITTED ? "committed" : "rolled back");
      }
    });
  }

  @Test
  void theWorkRunsInASpringTransactionOnItsConnectionAndCommitsWhenItReturns() throws Exception {
    SpringInboxTransactions transactions = new SpringInboxTransactions(new DataSourceTransactionManager(dataSource),
        store);

    String result = transactions.inTransaction(tx -> {
      assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isTrue();
      assertThat(JdbcTransaction.connectionOf(tx)).isSameAs(DataSourceUtils.getConnection(dataSource));
      jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", "a");
      recordCompletion();
      return "done";
    });

    assertThat(result).isEqualTo("done");
    assertThat(rows("a")).isEqualTo(1);
    assertThat(completions).containsExactly("committed");
    assertThat(TransactionSynchronizationManager.hasResource(dataSource)).isFalse();
  }

  @Test
  void theyJoinAnOpenTransactionOnlyWhenASpringTransactionIsActive() {
    DataSourceTransactionManager manager = new DataSourceTransactionManager(dataSource);
    SpringInboxTransactions transactions = new SpringInboxTransactions(manager, store);

    boolean inside = new TransactionTemplate(manager).execute(status -> transactions.joinsOpenTransaction());

    assertThat(transactions.joinsOpenTransaction()).isFalse();
    assertThat(inside).isTrue();
  }

  @Test
  void aCheckedExceptionRollsTheTransactionBackAndReachesTheCallerAsItIs() {
    SpringInboxTransactions transactions = new SpringInboxTransactions(new DataSourceTransactionManager(dataSource),
        store);
    IOException thrown = new IOException("the work failed");

    assertThatThrownBy(() -> transactions.inTransaction(tx -> {
      jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", "b");
      recordCompletion();
      throw thrown;
    })).isSameAs(thrown);

    assertThat(rows("b")).isZero();
    assertThat(completions).containsExactly("rolled back");
  }

  @Test
  void anUncheckedExceptionRollsTheTransactionBack() {
    SpringInboxTransactions transactions = new SpringInboxTransactions(new DataSourceTransactionManager(dataSource),
        store);

    assertThatThrownBy(() -> transactions.inTransaction(tx -> {
      jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", "c");
      recordCompletion();
      throw new IllegalStateException("the work failed");
    })).isInstanceOf(IllegalStateException.class).hasMessage("the work failed");

    assertThat(rows("c")).isZero();
    assertThat(completions).containsExactly("rolled back");
  }

  @Test
  void aWorkThatMarkedItsTransactionRollbackOnlyRollsItBack() throws Exception {
    SpringInboxTransactions transactions = new SpringInboxTransactions(new DataSourceTransactionManager(dataSource),
        store);

    String result = transactions.inTransaction(tx -> {
      jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", "d");
      recordCompletion();
      tx.setRollbackOnly();
      return "kept back";
    });

    assertThat(result).isEqualTo("kept back");
    assertThat(rows("d")).isZero();
    assertThat(completions).containsExactly("rolled back");
  }

  @Test
  void aTransactionManagerOfAnotherDataSourceIsRefusedBeforeTheWorkRuns() {
    SpringInboxTransactions transactions = new SpringInboxTransactions(new DataSourceTransactionManager(h2()), store);
    AtomicInteger ran = new AtomicInteger();

    assertThatThrownBy(() -> transactions.inTransaction(tx -> ran.incrementAndGet()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("holds no connection of");

    assertThat(ran).hasValue(0);
  }

  /** A transaction manager whose begin, commit or rollback fails as a database that went away makes it fail. */
  static final class FailingTransactionManager extends DataSourceTransactionManager {
    private final String failing;

    FailingTransactionManager(DataSource dataSource, String failing) {
      super(dataSource);
      this.failing = failing;
    }

    @Override
    protected void doBegin(Object transaction, TransactionDefinition definition) {
      if (failing.equals("begin")) {
        throw new CannotCreateTransactionException("Could not open JDBC Connection for transaction",
            new SQLTransientConnectionException("Connection is not available, request timed out", "08001"));
      }
      super.doBegin(transaction, definition);
    }

    @Override
    protected void doCommit(DefaultTransactionStatus status) {
      if (failing.equals("commit")) {
        throw new TransactionSystemException("Could not commit JDBC transaction",
            new SQLException("An I/O error occurred while sending to the backend", "08006"));
      }
      super.doCommit(status);
    }

    @Override
    protected void doRollback(DefaultTransactionStatus status) {
      super.doRollback(status);
      if (failing.equals("rollback")) {
        throw new TransactionSystemException("Could not roll back JDBC transaction",
            new SQLException("An I/O error occurred while sending to the backend", "08006"));
      }
    }
  }

  @Test
  void aDatabaseThatFailsTheBeginIsAStoreFailureAnOutage() {
    SpringInboxTransactions transactions = new SpringInboxTransactions(
        new FailingTransactionManager(dataSource, "begin"), store);
    AtomicInteger ran = new AtomicInteger();

    Throwable thrown = catchThrowable(() -> transactions.inTransaction(tx -> ran.incrementAndGet()));

    assertThat(thrown).isInstanceOf(StoreException.class).hasMessageContaining("beginning a Spring transaction")
        .hasCauseInstanceOf(CannotCreateTransactionException.class);
    assertThat(((StoreException) thrown).sqlState()).isEqualTo("08001");
    assertThat(store.fault(thrown)).isEqualTo(InboxStore.Fault.OUTAGE);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aDatabaseThatFailsTheCommitIsAStoreFailureAnOutage() {
    SpringInboxTransactions transactions = new SpringInboxTransactions(
        new FailingTransactionManager(dataSource, "commit"), store);

    Throwable thrown = catchThrowable(() -> transactions.inTransaction(tx -> "done"));

    assertThat(thrown).isInstanceOf(StoreException.class).hasMessageContaining("committing a Spring transaction");
    assertThat(((StoreException) thrown).sqlState()).isEqualTo("08006");
    assertThat(store.fault(thrown)).isEqualTo(InboxStore.Fault.OUTAGE);
  }

  @Test
  void aCommitFailureThatJdbcTransactionManagerTranslatesIsAStoreFailureToo() {
    // Spring Boot's JdbcTransactionManager turns a failed commit into a DataAccessException, not a
    // TransactionException: a deferred unique constraint on PostgreSQL fails the commit itself
    String suffix = Long.toHexString(System.nanoTime());
    String table = "inboxtx_deferred_" + suffix;
    String inbox = "inboxtx_ib_" + suffix;
    TestPostgres.execute("CREATE TABLE " + table + " (id VARCHAR(64), CONSTRAINT " + table + "_uq UNIQUE (id)"
        + " DEFERRABLE INITIALLY DEFERRED)");
    try {
      JdbcInboxStore postgres = JdbcInboxStore.builder(TestPostgres.postgres()).table(inbox)
          .createSchemaIfMissing(true).build();
      SpringInboxTransactions transactions = new SpringInboxTransactions(
          new JdbcTransactionManager(TestPostgres.postgres()), postgres);

      Throwable thrown = catchThrowable(() -> transactions.inTransaction(tx -> {
        try (Statement st = JdbcTransaction.connectionOf(tx).createStatement()) {
          st.executeUpdate("INSERT INTO " + table + " (id) VALUES ('same'), ('same')");
        }
        return null;
      }));

      assertThat(thrown).isInstanceOf(StoreException.class).hasMessageContaining("committing a Spring transaction")
          .hasCauseInstanceOf(DataAccessException.class);
      assertThat(((StoreException) thrown).sqlState()).isEqualTo("23505");
      assertThat(TestPostgres.count("SELECT COUNT(*) FROM " + table)).isZero();
    } finally {
      TestPostgres.drop(table, inbox);
    }
  }

  @Test
  void whenTheRollbackFailsTooTheCallerGetsWhatTheWorkThrew() {
    SpringInboxTransactions transactions = new SpringInboxTransactions(
        new FailingTransactionManager(dataSource, "rollback"), store);
    IllegalStateException failure = new IllegalStateException("the handler failed");
    IOException checked = new IOException("the handler failed, checked");

    Throwable unchecked = catchThrowable(() -> transactions.inTransaction(tx -> {
      throw failure;
    }));
    Throwable fromChecked = catchThrowable(() -> transactions.inTransaction(tx -> {
      throw checked;
    }));

    assertThat(unchecked).isSameAs(failure);
    assertThat(failure.getSuppressed()).singleElement().isInstanceOf(TransactionSystemException.class);
    assertThat(fromChecked).isSameAs(checked);
    assertThat(checked.getSuppressed()).singleElement().isInstanceOf(TransactionSystemException.class);
  }

  @Test
  void aCommitRefusedBecauseTheWorkSwallowedAJoinedTransactionsFailureIsNoStoreFailure() {
    DataSourceTransactionManager manager = new DataSourceTransactionManager(dataSource);
    SpringInboxTransactions transactions = new SpringInboxTransactions(manager, store);
    TransactionTemplate joined = new TransactionTemplate(manager);

    Throwable thrown = catchThrowable(() -> transactions.inTransaction(tx -> {
      jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", "e");
      try {
        joined.executeWithoutResult(status -> {
          throw new IllegalStateException("a @Transactional service failed");
        });
      } catch (IllegalStateException swallowed) {
        // the service's failure marked the whole transaction rollback-only
      }
      return "done";
    }));

    assertThat(thrown).isInstanceOf(UnexpectedRollbackException.class);
    assertThat(rows("e")).isZero();
  }

  /** A transaction manager that counts the transactions it began. */
  static final class CountingTransactionManager extends DataSourceTransactionManager {
    final AtomicInteger begun = new AtomicInteger();

    CountingTransactionManager(DataSource dataSource) {
      super(dataSource);
    }

    @Override
    protected void doBegin(Object transaction, TransactionDefinition definition) {
      begun.incrementAndGet();
      super.doBegin(transaction, definition);
    }
  }

  /** Two transaction managers of the application's data source, neither primary. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class TwoManagersApp {
    @Bean
    CountingTransactionManager first(DataSource dataSource) {
      return new CountingTransactionManager(dataSource);
    }

    @Bean
    CountingTransactionManager second(DataSource dataSource) {
      return new CountingTransactionManager(dataSource);
    }
  }

  /** Two transaction managers of the application's data source, the second primary. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class PrimaryManagerApp {
    @Bean
    CountingTransactionManager first(DataSource dataSource) {
      return new CountingTransactionManager(dataSource);
    }

    @Bean
    @Primary
    CountingTransactionManager second(DataSource dataSource) {
      return new CountingTransactionManager(dataSource);
    }
  }

  /** A transaction manager of another data source only. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class OtherManagerApp {
    @Bean
    CountingTransactionManager other() {
      return new CountingTransactionManager(h2());
    }
  }

  private static ConfigurableApplicationContext run(Class<?> app) {
    List<String> args = new ArrayList<>(List.of(
        "--spring.datasource.url=jdbc:h2:mem:inboxtx-cfg-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true"));
    return new SpringApplicationBuilder(app).web(WebApplicationType.NONE).run(args.toArray(String[]::new));
  }

  /** Processes one event through the context's inbox; returns whether its handler saw a Spring transaction. */
  private static boolean processedInASpringTransaction(ConfigurableApplicationContext context) {
    List<Boolean> seen = new CopyOnWriteArrayList<>();
    InboxHandler handler = (tx, event) -> {
      seen.add(TransactionSynchronizationManager.isActualTransactionActive()
          && JdbcTransaction.connectionOf(tx) == DataSourceUtils.getConnection(context.getBean(DataSource.class)));
      return null;
    };
    Inbox inbox = context.getBean(Inbox.class);

    inbox.processBatchAndCommit("inboxtx", List.of(InboxEvent.of(UUID.randomUUID().toString(),
        "{}".getBytes(StandardCharsets.UTF_8))), handler);
    return seen.get(0);
  }

  @Test
  void severalTransactionManagersOfTheInboxDataSourceWithoutAPrimaryLeaveTheInboxItsStoresTransactions() {
    try (ConfigurableApplicationContext context = run(TwoManagersApp.class)) {
      Inbox inbox = context.getBean(Inbox.class);
      DataSource applications = context.getBean(DataSource.class);
      List<Boolean> joined = new CopyOnWriteArrayList<>();
      InboxHandler handler = (tx, event) -> {
        joined.add(JdbcTransaction.connectionOf(tx) == DataSourceUtils.getConnection(applications));
        return null;
      };

      inbox.processBatchAndCommit("inboxtx", List.of(InboxEvent.of(UUID.randomUUID().toString(),
          "{}".getBytes(StandardCharsets.UTF_8))), JoinedHandler.of(handler, inbox));

      assertThat(inbox.transactions()).isNotInstanceOf(SpringInboxTransactions.class);
      assertThat(context.getBean("first", CountingTransactionManager.class).begun).hasValue(0);
      assertThat(context.getBean("second", CountingTransactionManager.class).begun).hasValue(0);
      assertThat(joined).as("the handler's Spring data access is bound to the inbox's connection")
          .containsExactly(true);
    }
  }

  /**
   * A handler on an inbox of its store's own transactions, whose Spring data access is bound to the inbox's
   * connection (the view that refuses to end the transaction): a {@code REQUIRED} transaction joins without committing
   * it, and a {@code NESTED} one rolls back to its savepoint alone.
   */
  @Test
  void springTransactionsInAJoinedHandlerJoinTheInboxsConnectionAndNestedOnesUseSavepoints() throws Exception {
    Inbox own = Inbox.builder(JdbcInboxStore.builder(dataSource).createSchemaIfMissing(true).build()).build();
    JdbcTransactionManager manager = new JdbcTransactionManager(dataSource);
    TransactionTemplate required = new TransactionTemplate(manager);
    TransactionTemplate nested = new TransactionTemplate(manager);
    nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
    String id = UUID.randomUUID().toString();
    InboxHandler handler = (tx, event) -> {
      jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", id + "-a");
      nested.executeWithoutResult(status -> {
        jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", id + "-b");
        status.setRollbackOnly();
      });
      required.executeWithoutResult(status -> jdbc.update("INSERT INTO inboxtx_row (id) VALUES (?)", id + "-c"));
      return null;
    };

    own.processBatchAndCommit("inboxtx", List.of(InboxEvent.of(id, "{}".getBytes(StandardCharsets.UTF_8))),
        JoinedHandler.of(handler, own));

    assertThat(rows(id + "-a")).isEqualTo(1);
    assertThat(rows(id + "-b")).as("rolled back to the nested transaction's savepoint").isZero();
    assertThat(rows(id + "-c")).isEqualTo(1);
    assertThat(own.contains("inboxtx", id)).isTrue();
  }

  @Test
  void anInboxOnSpringsTransactionsNeedsNoJoinedHandler() {
    InboxHandler handler = (tx, event) -> null;
    Inbox spring = Inbox.builder(store)
        .transactions(new SpringInboxTransactions(new DataSourceTransactionManager(dataSource), store)).build();
    Inbox own = Inbox.builder(store).build();

    assertThat(JoinedHandler.of(handler, spring)).isSameAs(handler);
    assertThat(JoinedHandler.of(handler, own)).isNotSameAs(handler);
  }

  @Test
  void ofSeveralTransactionManagersOfTheInboxDataSourceThePrimaryOneIsTaken() {
    try (ConfigurableApplicationContext context = run(PrimaryManagerApp.class)) {
      boolean inSpring = processedInASpringTransaction(context);

      assertThat(inSpring).isTrue();
      assertThat(context.getBean("second", CountingTransactionManager.class).begun).hasValue(1);
      assertThat(context.getBean("first", CountingTransactionManager.class).begun).hasValue(0);
    }
  }

  @Test
  void withoutATransactionManagerOfItsDataSourceTheInboxRunsItsStoresOwnTransactions() {
    try (ConfigurableApplicationContext context = run(OtherManagerApp.class)) {
      boolean inSpring = processedInASpringTransaction(context);

      assertThat(inSpring).isFalse();
      assertThat(context.getBean(CountingTransactionManager.class).begun).hasValue(0);
    }
  }
}
