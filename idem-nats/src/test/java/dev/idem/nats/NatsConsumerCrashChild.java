package dev.idem.nats;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.test.ChildJvm;
import dev.idem.test.TestPostgres;
import io.nats.client.Connection;
import io.nats.client.Message;
import io.nats.client.Nats;
import java.time.Duration;

/**
 * The consumer JVM that {@link NatsConsumerKillNineTest} kills: consumes through the inbox one message at a time and,
 * once the inbox transaction of its {@code crashAt}-th message has committed and before that message is acknowledged,
 * prints {@code INBOX-COMMITTED <Nats-Msg-Id>} and blocks until the SIGKILL arrives.
 *
 * <p>Arguments: NATS URL, stream, subject, JDBC URL, user, inbox table, effect table, crashAt.
 */
public final class NatsConsumerCrashChild {
  /** The durable consumer's ack wait, the same in the child and in the test's own consumer. */
  static final Duration ACK_WAIT = Duration.ofSeconds(2);

  private NatsConsumerCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariDataSource ds = TestPostgres.pool(args[3], args[4], 2);
    Inbox inbox = Inbox.builder(JdbcInboxStore.builder(ds).dialect(JdbcDialect.POSTGRESQL).table(args[5]).build())
        .build();
    String effects = args[6];
    int crashAt = Integer.parseInt(args[7]);
    String[] handled = new String[1];
    ConsumerListener crash = new ConsumerListener() {
      private int commits;

      @Override
      public void committed(String consumer, String source, long nextOffset, int messages, int duplicates) {
        if (++commits == crashAt) {
          ChildJvm.stopHere("INBOX-COMMITTED " + handled[0]); // killed here, before the acknowledgement
        }
      }
    };
    Connection nats = Nats.connect(args[0]);
    NatsInboxConsumer.builder(nats, inbox, "billing", args[1], args[2])
        .handler((tx, event) -> {
          handled[0] = event.message(Message.class).getHeaders().getFirst(NatsInboxConsumer.MESSAGE_ID);
          TestPostgres.insertEffect(JdbcTransaction.connectionOf(tx), effects, handled[0]);
          return null;
        })
        .batchSize(1)
        .ackWait(ACK_WAIT)
        .fetchWait(Duration.ofMillis(100))
        .listener(crash)
        .build()
        .start();
    ChildJvm.stopHere("READY");
  }
}
