package dev.idem.spring.console;

import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TestPostgres;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** Starts {@link ConsoleApp} on PostgreSQL, in tables of the console's tests, and makes records for it. */
final class ConsoleStarter {
  static final String OPERATION = "POST /orders";

  private ConsoleStarter() {}

  /** The application, on a random port of 127.0.0.1, with the console at {@code path}. */
  static ConfigurableApplicationContext run(String path, String... more) {
    String[] args = {"--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=" + TestPostgres.url(), "--spring.datasource.username=" + TestPostgres.user(),
        "--spring.datasource.password=",
        "--idem.store.table=" + ConsoleStarterTest.RECORDS, "--idem.store.initialize-schema=true",
        "--idem.outbox.table=" + ConsoleStarterTest.OUTBOX,
        "--idem.outbox.inbox-table=" + ConsoleStarterTest.INBOX, "--idem.outbox.initialize-schema=true",
        "--idem.outbox.relay.poll-interval=50ms", "--idem.console.path=" + path};
    String[] all = new String[args.length + more.length];
    System.arraycopy(args, 0, all, 0, args.length);
    System.arraycopy(more, 0, all, args.length, more.length);
    return new SpringApplicationBuilder(ConsoleApp.class).run(all);
  }

  /** An uncertain record of a new key in scope {@code tenant-a}; answers the key. */
  static String uncertainRecord(ConfigurableApplicationContext context, String prefix) throws Exception {
    IdempotencyStore store = context.getBean(IdempotencyStore.class);
    RecordKey key = RecordKey.of("tenant-a", OPERATION, prefix + "-" + UUID.randomUUID().toString()
        .replace("-", ""));
    Instant at = Instant.now();
    IdempotencyRecord record = IdempotencyRecord.claimed(key, Fingerprint.ofHash("b".repeat(64)), "worker-1", at,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(1))
        .withRecoveryPoint("charge", Checkpoint.of(Map.of("order_id", "ord_1")), at.plusSeconds(30), at)
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, at);
    boolean inserted = store.inTransaction(tx -> store.insert(tx, record));
    if (!inserted) {
      throw new IllegalStateException("the record of " + key + " exists already");
    }
    return key.key().value();
  }

  static long version(ConfigurableApplicationContext context, String key) {
    return context.getBean(IdempotencyStore.class).find(RecordKey.of("tenant-a", OPERATION, key)).orElseThrow()
        .version();
  }

  static RecordState state(ConfigurableApplicationContext context, String key) {
    return context.getBean(IdempotencyStore.class).find(RecordKey.of("tenant-a", OPERATION, key)).orElseThrow()
        .state();
  }
}
