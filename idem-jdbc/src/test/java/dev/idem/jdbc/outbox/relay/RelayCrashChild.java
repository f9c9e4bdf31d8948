package dev.idem.jdbc.outbox.relay;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * The relay JVM that {@link RelayKillNineTest} kills: relays to a file sink and, in the middle of a batch (after
 * {@code crashAt} messages), prints {@code MID-BATCH} and blocks until the SIGKILL arrives.
 *
 * <p>Arguments: JDBC URL, user, outbox table, sink file, crashAt, batch size.
 */
public final class RelayCrashChild {
  private RelayCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[0]);
    config.setUsername(args[1]);
    config.setPassword("");
    config.setMaximumPoolSize(4);
    HikariDataSource ds = new HikariDataSource(config);
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(ds).table(args[2]).build()).build();
    int crashAt = Integer.parseInt(args[4]);
    CountDownLatch never = new CountDownLatch(1);
    FileSinkTransport sink = new FileSinkTransport(Path.of(args[3])) {
      private int written;

      @Override
      void afterWrite(OutboxMessage message) {
        if (++written == crashAt) {
          System.out.println("MID-BATCH " + message.id());
          System.out.flush();
          try {
            never.await(); // the parent kills this JVM here
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    OutboxRelay relay = OutboxRelay.builder(outbox).name("child").route("sink", sink)
        .batchSize(Integer.parseInt(args[5])).lease(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10)).build();
    System.out.println("READY");
    System.out.flush();
    relay.runOnce();
    while (true) {
      relay.runOnce();
    }
  }
}
