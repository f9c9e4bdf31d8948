package dev.idem.kafka;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxTransport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The relay JVM that {@link KafkaEndToEndTest} kills: relays to Kafka and, once the broker has acknowledged its first
 * batch and before the relay marks it delivered, prints {@code SENT <n>} and blocks until the SIGKILL arrives.
 *
 * <p>Arguments: bootstrap servers, JDBC URL, user, outbox table, batch size, topic of {@code order.placed}.
 */
public final class RelayCrashChild {
  private RelayCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[1]);
    config.setUsername(args[2]);
    config.setPassword("");
    config.setMaximumPoolSize(2);
    HikariDataSource ds = new HikariDataSource(config);
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(ds).dialect(JdbcDialect.POSTGRESQL).table(args[3])
        .build()).build();
    CountDownLatch never = new CountDownLatch(1);
    KafkaTransport kafka = KafkaTransport.builder(Map.of("bootstrap.servers", args[0])).name("child")
        .topic("order.placed", args[5]).build();
    OutboxTransport crashing = new OutboxTransport() {
      @Override
      public DeliveryResult send(OutboxMessage message) {
        return sendAll(List.of(message)).get(0);
      }

      @Override
      public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
        List<DeliveryResult> results = kafka.sendAll(messages);
        long delivered = results.stream().filter(DeliveryResult::isDelivered).count();
        System.out.println("SENT " + delivered);
        System.out.flush();
        try {
          never.await(); // the parent kills this JVM here, before the relay marks the batch delivered
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return results;
      }
    };
    OutboxRelay relay = OutboxRelay.builder(outbox).name("child").route("kafka", crashing)
        .batchSize(Integer.parseInt(args[4])).lease(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10)).build();
    System.out.println("READY");
    System.out.flush();
    while (true) {
      relay.runOnce();
    }
  }
}
