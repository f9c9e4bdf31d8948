package dev.idem.rabbitmq;

import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.test.ChildJvm;
import dev.idem.test.TestPostgres;

/**
 * The consumer JVM that {@link RabbitMqConsumerKillNineTest} kills: consumes through the inbox, one message in hand
 * at a time, and once the inbox transaction of its {@code crashAt}-th message has committed and before that message
 * is acknowledged, prints {@code INBOX-COMMITTED <message-id>} and blocks until the SIGKILL arrives.
 *
 * <p>Arguments: AMQP URI, queue, JDBC URL, user, inbox table, effect table, crashAt.
 */
public final class RabbitConsumerCrashChild {
  private RabbitConsumerCrashChild() {}

  public static void main(String[] args) throws Exception {
    HikariDataSource ds = TestPostgres.pool(args[2], args[3], 2);
    Inbox inbox = Inbox.builder(JdbcInboxStore.builder(ds).dialect(JdbcDialect.POSTGRESQL).table(args[4]).build())
        .build();
    String effects = args[5];
    int crashAt = Integer.parseInt(args[6]);
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
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(args[0]);
    RabbitMqInboxConsumer.builder(factory, inbox, "billing", args[1])
        .handler((tx, event) -> {
          handled[0] = event.message(Delivery.class).getProperties().getMessageId();
          TestPostgres.insertEffect(JdbcTransaction.connectionOf(tx), effects, handled[0]);
          return null;
        })
        .prefetch(1)
        .listener(crash)
        .build()
        .start();
    ChildJvm.stopHere("READY");
  }
}
