package dev.idem.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.test.MutableClock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every database must do for the inbox: one effect per (consumer, event id) whatever the redeliveries, in the
 * caller's transaction; the kept result for duplicates; a typed refusal for the same id with another payload.
 */
abstract class InboxContract {
  protected final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  protected HikariDataSource ds;
  protected Inbox inbox;
  protected String effects;
  protected final AtomicInteger duplicates = new AtomicInteger();
  protected final AtomicInteger mismatches = new AtomicInteger();

  abstract JdbcDialect dialect();

  @BeforeEach
  void setUp() throws SQLException {
    ds = Databases.pool(dialect());
    String suffix = getClass().getSimpleName().substring(0, 2).toLowerCase();
    Databases.freshTables(dialect(), "obi_" + suffix, "ibi_" + suffix);
    effects = "ibi_effect_" + suffix;
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + effects);
      st.execute("CREATE TABLE " + effects + " (event_id VARCHAR(255) NOT NULL, amount INTEGER NOT NULL)");
    }
    inbox = Inbox.builder(ds).table("ibi_" + suffix).clock(clock).listener(new InboxListener() {
      @Override
      public void duplicate(String consumer) {
        duplicates.incrementAndGet();
      }

      @Override
      public void payloadMismatch(String consumer, String eventId) {
        mismatches.incrementAndGet();
      }
    }).build();
  }

  InboxHandler effect(String eventId) {
    return c -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (event_id, amount) VALUES (?, 1)")) {
        ps.setString(1, eventId);
        ps.executeUpdate();
      }
      return "applied " + eventId;
    };
  }

  int effectCount(String eventId) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + effects + " WHERE event_id = ?")) {
      ps.setString(1, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  InboxResult processCommitted(String consumer, String eventId, String payload) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      InboxResult r = inbox.process(c, consumer, eventId, payload, effect(eventId));
      c.commit();
      return r;
    }
  }

  @Test
  void aRedeliveryIsSkippedAndGetsTheKeptResult() throws Exception {
    String id = UUID.randomUUID().toString();
    InboxResult first = processCommitted("billing", id, "{\"a\":1}");
    assertThat(first.duplicate()).isFalse();
    assertThat(first.result()).isEqualTo("applied " + id);
    clock.advance(Duration.ofMinutes(3));
    InboxResult again = processCommitted("billing", id, "{\"a\":1}");
    assertThat(again.duplicate()).isTrue();
    assertThat(again.result()).isEqualTo("applied " + id);
    assertThat(again.firstReceivedAt()).isEqualTo(first.firstReceivedAt());
    assertThat(effectCount(id)).isEqualTo(1);
    assertThat(duplicates).hasValue(1);
    assertThat(inbox.contains("billing", id)).isTrue();
  }

  @Test
  void consumersAreIndependent() throws Exception {
    String id = UUID.randomUUID().toString();
    processCommitted("billing", id, "{}");
    assertThat(processCommitted("shipping", id, "{}").duplicate()).isFalse();
    assertThat(effectCount(id)).isEqualTo(2);
  }

  @Test
  void aRolledBackEffectLeavesNoRecordSoTheRetryRunsIt() throws Exception {
    String id = UUID.randomUUID().toString();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.process(c, "billing", id, "{}", conn -> {
        effect(id).handle(conn);
        throw new IllegalStateException("downstream refused");
      })).isInstanceOf(InboxHandlerException.class).hasRootCauseMessage("downstream refused");
      c.rollback();
    }
    assertThat(inbox.contains("billing", id)).isFalse();
    assertThat(processCommitted("billing", id, "{}").duplicate()).isFalse();
    assertThat(effectCount(id)).isEqualTo(1);
  }

  @Test
  void theSameIdWithAnotherPayloadIsRefused() throws Exception {
    String id = UUID.randomUUID().toString();
    processCommitted("billing", id, "{\"amount\":100}");
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.process(c, "billing", id, "{\"amount\":999}", effect(id)))
          .isInstanceOf(InboxPayloadMismatchException.class)
          .satisfies(e -> assertThat(((InboxPayloadMismatchException) e).eventId()).isEqualTo(id));
      c.rollback();
    }
    assertThat(mismatches).hasValue(1);
    assertThat(effectCount(id)).isEqualTo(1);
  }

  @Test
  void concurrentDeliveriesOfOneEventHaveOneEffect() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 25; round++) {
        String id = "evt-" + round + "-" + UUID.randomUUID();
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<InboxResult>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          results.add(pool.submit(() -> {
            barrier.await(10, TimeUnit.SECONDS);
            return inbox.processAndCommit("billing", id, "test", "{\"x\":1}".getBytes(StandardCharsets.UTF_8),
                effect(id));
          }));
        }
        int fresh = 0;
        for (Future<InboxResult> f : results) {
          InboxResult r = f.get(60, TimeUnit.SECONDS);
          fresh += r.duplicate() ? 0 : 1;
          assertThat(r.result()).isEqualTo("applied " + id);
        }
        assertThat(fresh).as("round %d: exactly one delivery ran the handler", round).isEqualTo(1);
        assertThat(effectCount(id)).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aConcurrentDeliveryWaitsForARollbackAndThenRunsItself() throws Exception {
    String id = UUID.randomUUID().toString();
    CountDownLatch firstInserted = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?> first = pool.submit(() -> {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          try {
            inbox.process(c, "billing", id, "{}", conn -> {
              firstInserted.countDown();
              releaseFirst.await(30, TimeUnit.SECONDS);
              throw new IllegalStateException("crash before commit");
            });
          } catch (InboxHandlerException expected) {
            c.rollback();
          }
        }
        return null;
      });
      assertThat(firstInserted.await(30, TimeUnit.SECONDS)).isTrue();
      Future<InboxResult> second = pool.submit(() -> inbox.processAndCommit("billing", id, null,
          "{}".getBytes(StandardCharsets.UTF_8), effect(id)));
      releaseFirst.countDown();
      first.get(30, TimeUnit.SECONDS);
      assertThat(second.get(30, TimeUnit.SECONDS).duplicate()).isFalse();
      assertThat(effectCount(id)).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void purgeRemovesOldRecordsOnly() throws Exception {
    String old = UUID.randomUUID().toString();
    processCommitted("billing", old, "{}");
    clock.advance(Duration.ofDays(8));
    String recent = UUID.randomUUID().toString();
    processCommitted("billing", recent, "{}");
    assertThat(inbox.purge(Duration.ofDays(7), 100)).isEqualTo(1);
    assertThat(inbox.contains("billing", old)).isFalse();
    assertThat(inbox.contains("billing", recent)).isTrue();
  }

  @Test
  void badInputIsRefusedBeforeAnyWrite() throws Exception {
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> inbox.process(c, "billing", "x", "{}", effect("x")))
          .as("auto-commit on").isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.process(c, "billing", "x".repeat(256), "{}", effect("x")))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> inbox.process(c, "", "x", "{}", effect("x")))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> inbox.process(c, "billing", "big", "{}", conn -> "r".repeat(5000)))
          .isInstanceOf(InboxHandlerException.class).hasMessageContaining("at most 4000");
      c.rollback();
    }
    assertThat(inbox.contains("billing", "big")).isFalse();
  }

  @Test
  void anErrorInTheHandlerCommitsNothing() throws Exception {
    String id = UUID.randomUUID().toString();
    assertThatThrownBy(() -> inbox.processAndCommit("billing", id, null, "{}".getBytes(StandardCharsets.UTF_8),
        conn -> {
          effect(id).handle(conn);
          throw new AssertionError("a handler bug");
        })).isInstanceOf(AssertionError.class);
    assertThat(inbox.contains("billing", id)).as("no inbox row").isFalse();
    assertThat(effectCount(id)).as("no half effect").isZero();
  }
}
