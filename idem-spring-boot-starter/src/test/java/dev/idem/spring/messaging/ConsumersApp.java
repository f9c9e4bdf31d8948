package dev.idem.spring.messaging;

import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * An application for the consumer tests, configured by properties only: its one {@link InboxHandler} bean,
 * {@code recordEffect}, writes a row per message into the business table {@code test.effects} in the inbox
 * transaction, and throws on a message whose payload is {@code poison}; on one whose payload is {@code gate} it
 * counts {@link #entered} down and waits for {@link #gate} first. A bean that is no handler,
 * {@code notAHandler}, is there for the validation tests.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ConsumersApp {
  /** What the handler throws on a poison message. */
  static final class PoisonException extends RuntimeException {
    PoisonException(String eventId) {
      super("poison message " + eventId);
    }
  }

  /** Counted down when the handler takes a {@code gate} message. */
  static volatile CountDownLatch entered = new CountDownLatch(1);
  /** What a {@code gate} message waits for (at most 30 s). */
  static volatile CountDownLatch gate = new CountDownLatch(0);

  /**
   * Starts the application on the test PostgreSQL, its outbox and inbox tables {@code <tables>_ob} and
   * {@code <tables>_ib} (created at startup), its handlers writing into {@code effects}, with {@code properties}
   * ({@code name=value}) on top.
   */
  static ConfigurableApplicationContext runOnPostgres(String tables, String effects, String... properties) {
    return runOnPostgresAt(TestPostgres.url(), tables, effects, properties);
  }

  /** As {@link #runOnPostgres(String, String, String...)}, on the PostgreSQL at {@code jdbcUrl}. */
  static ConfigurableApplicationContext runOnPostgresAt(String jdbcUrl, String tables, String effects,
      String... properties) {
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--spring.datasource.url=" + jdbcUrl, "--spring.datasource.username=" + TestPostgres.user(),
        "--spring.datasource.password=", "--idem.outbox.initialize-schema=true",
        "--idem.outbox.table=" + tables + "_ob", "--idem.outbox.inbox-table=" + tables + "_ib",
        "--test.effects=" + effects));
    for (String p : properties) {
      args.add("--" + p);
    }
    return new SpringApplicationBuilder(ConsumersApp.class).run(args.toArray(String[]::new));
  }

  /** Drops what {@link #runOnPostgres} created under {@code tables}, and the effect table. */
  static void dropTables(String tables, String effects) {
    TestPostgres.drop(effects, tables + "_ib", tables + "_ob_attempt", tables + "_ob");
  }

  @Bean
  InboxHandler recordEffect(@Value("${test.effects:none}") String effects) {
    return (tx, event) -> {
      String payload = new String(event.payload(), StandardCharsets.UTF_8);
      if ("poison".equals(payload)) {
        throw new PoisonException(event.eventId());
      }
      if ("gate".equals(payload)) {
        entered.countDown();
        if (!gate.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never opened the gate");
        }
      }
      TestPostgres.insertEffect(JdbcTransaction.connectionOf(tx), effects, event.eventId());
      return null;
    };
  }

  /**
   * Writes {@code recorded:<id>} when the event's inbox row is already in the transaction as the handler runs (the
   * usual order: the rows first), and {@code first:<id>} when it is not yet (the first-delivery order: the effect
   * first, the rows after it).
   */
  @Bean
  InboxHandler recordInboxOrder(@Value("${test.effects:none}") String effects,
      @Value("${idem.outbox.inbox-table:none}") String inbox) {
    return (tx, event) -> {
      Connection c = JdbcTransaction.connectionOf(tx);
      long rows;
      try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + inbox + " WHERE event_id = ?")) {
        ps.setString(1, event.eventId());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          rows = rs.getLong(1);
        }
      }
      TestPostgres.insertEffect(c, effects, (rows == 0 ? "first:" : "recorded:") + event.eventId());
      return null;
    };
  }

  /**
   * Writes its row through Spring's {@link JdbcTemplate} first and then throws on a poison message: the row must
   * roll back with the inbox transaction.
   */
  @Bean
  InboxHandler recordWithJdbcTemplate(@Value("${test.effects:none}") String effects, JdbcTemplate jdbc) {
    return (tx, event) -> {
      jdbc.update("INSERT INTO " + effects + " (event_id) VALUES (?)", event.eventId());
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new PoisonException(event.eventId());
      }
      return null;
    };
  }

  /** A service whose writes run in a Spring transaction of the default propagation. */
  public static class Ledger {
    private final JdbcTemplate jdbc;
    private final String effects;

    Ledger(JdbcTemplate jdbc, String effects) {
      this.jdbc = jdbc;
      this.effects = effects;
    }

    /** Writes one row for {@code eventId}. */
    @Transactional
    public void book(String eventId) {
      jdbc.update("INSERT INTO " + effects + " (event_id) VALUES (?)", eventId);
    }
  }

  @Bean
  Ledger ledger(JdbcTemplate jdbc, @Value("${test.effects:none}") String effects) {
    return new Ledger(jdbc, effects);
  }

  /** Books through the {@code @Transactional} {@link Ledger} first, and then throws on a poison message. */
  @Bean
  InboxHandler bookThroughService(Ledger ledger) {
    return (tx, event) -> {
      ledger.book(event.eventId());
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new PoisonException(event.eventId());
      }
      return null;
    };
  }

  /** Hears of every consumer next to the meters: the ids it dead-lettered. */
  static final class DeadLetters implements ConsumerListener {
    final List<String> ids = new CopyOnWriteArrayList<>();

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      ids.add(consumer + ":" + messageId);
    }
  }

  @Bean
  DeadLetters deadLetters() {
    return new DeadLetters();
  }

  @Bean
  String notAHandler() {
    return "not a handler";
  }
}
