package dev.idem.jdbc.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.jdbc.outbox.Databases;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import dev.idem.test.ChildJvm;
import dev.idem.test.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A relay JVM is killed with SIGKILL in the middle of a batch: half of the batch reached the destination, none of it
 * was marked. A second relay takes the rows over when the lease ends. Nothing is lost; the only duplicates are the
 * sent half of the killed batch.
 */
class RelayKillNineTest {
  static final int EVENTS = 3_000;
  static final int BATCH = 100;
  static final int CRASH_AT = 1_050;

  @Test
  void killNineMidBatchLosesNothingAndDuplicatesOnlyTheSentPartOfThatBatch() throws Exception {
    JdbcDialect dialect = JdbcDialect.POSTGRESQL;
    HikariDataSource ds = Databases.pool(dialect);
    String table = Databases.freshTables(dialect, "obk_pg", "ibk_pg");
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(ds).table(table).build()).build();
    Set<UUID> enqueued = new HashSet<>();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int from = 0; from < EVENTS; from += 500) {
        List<OutboxEvent> chunk = new ArrayList<>();
        for (int i = from; i < from + 500; i++) {
          chunk.add(OutboxEvent.builder("payment.succeeded").aggregate("payment", "p" + i)
              .payload("{\"n\":" + i + "}").destination("sink").build());
        }
        enqueued.addAll(outbox.enqueueAll(JdbcTransaction.of(c), chunk));
        c.commit();
      }
    }
    Path sink = Files.createTempFile("idem-relay-sink", ".log");
    try (ChildJvm child = ChildJvm.start(RelayCrashChild.class, List.of(Databases.url(dialect),
        Databases.user(dialect), table, sink.toString(), Integer.toString(CRASH_AT), Integer.toString(BATCH)))) {
      child.awaitLine("READY", ChildJvm.READY_TIMEOUT);
      child.awaitLine("MID-BATCH", ChildJvm.READY_TIMEOUT);
      child.kill();
    }
    Map<UUID, Integer> beforeRestart = FileSinkTransport.arrivals(sink);
    assertThat(beforeRestart).hasSize(CRASH_AT);
    long leased = outbox.list(OutboxQuery.status(OutboxStatus.PENDING).limit(500)).entries().stream()
        .filter(e -> e.leaseOwner() != null).count();
    assertThat(leased).as("the killed relay's batch is still leased").isEqualTo(BATCH);

    try (FileSinkTransport second = new FileSinkTransport(sink);
        OutboxRelay relay = OutboxRelay.builder(outbox).name("survivor").route("sink", second).batchSize(BATCH)
            .pollInterval(Duration.ofMillis(10)).build()) {
      relay.start();
      Eventually.await("every event delivered", Duration.ofMinutes(2), outbox::stats,
          stats -> stats.count(OutboxStatus.DELIVERED) == EVENTS);
    }
    Map<UUID, Integer> arrivals = FileSinkTransport.arrivals(sink);
    assertThat(arrivals.keySet()).as("nothing lost").isEqualTo(enqueued);
    int duplicates = arrivals.values().stream().mapToInt(n -> n - 1).sum();
    assertThat(duplicates).as("the sent half of the killed batch, no more").isEqualTo(CRASH_AT % BATCH);
    Files.deleteIfExists(sink);
  }
}
