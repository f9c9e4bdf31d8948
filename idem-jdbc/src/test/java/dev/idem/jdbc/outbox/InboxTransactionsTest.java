package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.spi.InboxTransactions;
import dev.idem.outbox.webhook.WebhookReceiver;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.outbox.webhook.WebhookVerifier;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An inbox built with {@code transactions(...)} opens every transaction of its own through them, on H2: the batch
 * of {@code processBatchAndCommit}, {@code inTransaction} and the webhook receiver's. The inbox row and the handler's
 * write commit together in that transaction, or roll back together when the handler throws.
 */
class InboxTransactionsTest {
  private static final String CONSUMER = "ibtx-billing";

  private DataSource ds;
  private JdbcInboxStore store;
  private RecordingTransactions transactions;
  private Inbox inbox;
  private String effects;

  /** Transactions on connections of their own, recording what they did and which connection they worked on. */
  static final class RecordingTransactions implements InboxTransactions {
    final List<String> calls = new CopyOnWriteArrayList<>();
    final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final DataSource dataSource;

    RecordingTransactions(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    @Override
    public <R> R inTransaction(TransactionWork<R> work) throws Exception {
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        connections.add(c);
        calls.add("begin");
        try {
          R result = work.execute(JdbcTransaction.of(c));
          c.commit();
          calls.add("commit");
          return result;
        } catch (Exception e) {
          c.rollback();
          calls.add("rollback");
          throw e;
        } finally {
          c.setAutoCommit(true);
        }
      }
    }
  }

  @BeforeEach
  void setUp() throws SQLException {
    ds = Databases.pool(JdbcDialect.H2);
    Databases.freshTables(JdbcDialect.H2, "ibtx_ob", "ibtx_ib");
    effects = "ibtx_effect";
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + effects);
      st.execute("CREATE TABLE " + effects + " (event_id VARCHAR(255) NOT NULL)");
    }
    store = JdbcInboxStore.builder(ds).dialect(JdbcDialect.H2).table("ibtx_ib").build();
    transactions = new RecordingTransactions(ds);
    inbox = Inbox.builder(store).transactions(transactions).build();
  }

  /** Writes the effect on the transaction's connection, and records which connection that was. */
  private InboxHandler effect(List<Connection> seen) {
    return (tx, event) -> {
      Connection c = JdbcTransaction.connectionOf(tx);
      seen.add(c);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (event_id) VALUES (?)")) {
        ps.setString(1, event.eventId());
        ps.executeUpdate();
      }
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new IllegalStateException("poison " + event.eventId());
      }
      return "done " + event.eventId();
    };
  }

  private int effectRows(String eventId) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + effects + " WHERE event_id = ?")) {
      ps.setString(1, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static InboxEvent event(String id, String payload) {
    return InboxEvent.of(id, payload.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void processBatchAndCommitRunsInTheGivenTransactionsAndCommitsTheRowWithTheEffect() throws SQLException {
    List<Connection> seen = new CopyOnWriteArrayList<>();

    List<InboxResult> results = inbox.processBatchAndCommit(CONSUMER, List.of(event("e-1", "a"), event("e-2", "b")),
        effect(seen));
    List<InboxResult> again = inbox.processBatchAndCommit(CONSUMER, List.of(event("e-1", "a")), effect(seen));

    assertThat(transactions.calls).containsExactly("begin", "commit", "begin", "commit");
    assertThat(seen).hasSize(2).allSatisfy(c -> assertThat(c).isSameAs(transactions.connections.get(0)));
    assertThat(results).extracting(InboxResult::duplicate).containsExactly(false, false);
    assertThat(again).singleElement().satisfies(r -> {
      assertThat(r.duplicate()).isTrue();
      assertThat(r.result()).isEqualTo("done e-1");
    });
    assertThat(inbox.contains(CONSUMER, "e-1")).isTrue();
    assertThat(inbox.contains(CONSUMER, "e-2")).isTrue();
    assertThat(effectRows("e-1")).isEqualTo(1);
    assertThat(effectRows("e-2")).isEqualTo(1);
  }

  @Test
  void aHandlerFailureRollsTheGivenTransactionBackLeavingNoInboxRowAndNoEffect() throws SQLException {
    List<Connection> seen = new CopyOnWriteArrayList<>();

    assertThatThrownBy(() -> inbox.processBatchAndCommit(CONSUMER, List.of(event("p-1", "poison")), effect(seen)))
        .isInstanceOf(InboxHandlerException.class).hasMessageContaining("poison p-1");

    assertThat(transactions.calls).containsExactly("begin", "rollback");
    assertThat(seen).singleElement().isSameAs(transactions.connections.get(0));
    assertThat(inbox.contains(CONSUMER, "p-1")).isFalse();
    assertThat(effectRows("p-1")).isZero();
  }

  @Test
  void inTransactionRunsInTheGivenTransactionsToo() throws Exception {
    List<Connection> seen = new CopyOnWriteArrayList<>();

    InboxResult r = inbox.inTransaction(tx -> inbox.process(tx, CONSUMER, event("t-1", "a"), effect(seen)));

    assertThat(r.duplicate()).isFalse();
    assertThat(transactions.calls).containsExactly("begin", "commit");
    assertThat(seen).singleElement().isSameAs(transactions.connections.get(0));
    assertThat(inbox.contains(CONSUMER, "t-1")).isTrue();
  }

  @Test
  void theWebhookReceiverRunsEachWebhookInTheInboxsTransactions() throws SQLException {
    WebhookSecret secret = WebhookSecret.generate();
    WebhookReceiver receiver = WebhookReceiver.of(CONSUMER, WebhookVerifier.builder(secret).build(), inbox);
    long now = Instant.now().getEpochSecond();
    byte[] good = "a".getBytes(StandardCharsets.UTF_8);
    byte[] poison = "poison".getBytes(StandardCharsets.UTF_8);
    List<Connection> seen = new CopyOnWriteArrayList<>();

    InboxResult first = receiver.receive("msg_1", Long.toString(now), WebhookSigner.of(secret).sign("msg_1", now,
        good), good, null, effect(seen));
    assertThatThrownBy(() -> receiver.receive("msg_2", Long.toString(now), WebhookSigner.of(secret).sign("msg_2", now,
        poison), poison, null, effect(seen))).isInstanceOf(InboxHandlerException.class);

    assertThat(first.duplicate()).isFalse();
    assertThat(transactions.calls).containsExactly("begin", "commit", "begin", "rollback");
    assertThat(seen).containsExactlyElementsOf(transactions.connections);
    assertThat(inbox.contains(CONSUMER, "msg_1")).isTrue();
    assertThat(inbox.contains(CONSUMER, "msg_2")).isFalse();
    assertThat(effectRows("msg_2")).isZero();
  }

  @Test
  void withoutTransactionsTheInboxUsesItsStoresOwn() throws SQLException {
    Inbox own = Inbox.builder(store).build();

    own.processBatchAndCommit(CONSUMER, List.of(event("o-1", "a")), effect(new CopyOnWriteArrayList<>()));

    assertThat(transactions.calls).isEmpty();
    assertThat(own.contains(CONSUMER, "o-1")).isTrue();
    assertThat(effectRows("o-1")).isEqualTo(1);
  }
}
