package dev.idem.kafka;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.test.ChildJvm;
import dev.idem.test.TestPostgres;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The consumer JVM that {@link KafkaConsumerKillNineTest} kills: consumes through the inbox and, once the inbox
 * transaction of its {@code crashAt}-th batch has committed and before that batch's offset is committed, prints
 * {@code INBOX-COMMITTED <partition> <nextOffset> <records>} and blocks until the SIGKILL arrives.
 *
 * <p>Arguments: bootstrap servers, group, topic, JDBC URL, user, inbox table, effect table, crashAt, batch size.
 */
public final class ConsumerCrashChild {
  private ConsumerCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariDataSource ds = TestPostgres.pool(args[3], args[4], 2);
    Inbox inbox = Inbox.builder(JdbcInboxStore.builder(ds).dialect(JdbcDialect.POSTGRESQL).table(args[5]).build())
        .build();
    String effects = args[6];
    int crashAt = Integer.parseInt(args[7]);
    ConsumerListener crash = new ConsumerListener() {
      private int batches;

      @Override
      public void committed(String consumer, String source, long nextOffset, int records, int duplicates) {
        if (++batches == crashAt) {
          // killed here, before the offset commit
          ChildJvm.stopHere("INBOX-COMMITTED " + KafkaFixture.partition(source) + " " + nextOffset + " " + records);
        }
      }
    };
    KafkaInboxConsumer.builder(Map.of("bootstrap.servers", args[0], "group.id", args[1],
            "session.timeout.ms", "6000", "heartbeat.interval.ms", "1000"), inbox, List.of(args[2]))
        .handler((tx, event) -> {
          ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
          TestPostgres.insertEffect(tx.unwrap(Connection.class), effects, KafkaFixture.eventId(r));
          return null;
        })
        .batchSize(Integer.parseInt(args[8]))
        .pollTimeout(Duration.ofMillis(100))
        .listener(crash)
        .build()
        .start();
    ChildJvm.stopHere("READY");
  }
}
