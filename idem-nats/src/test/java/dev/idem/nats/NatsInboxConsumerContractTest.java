package dev.idem.nats;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.test.outbox.InboxConsumerContract;
import io.nats.client.Message;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The inbox consumer kit on the real NATS JetStream: a stream of each test's own. JetStream terminates given-up and
 * rejected messages and keeps no dead letters ({@link #keepsDeadLetters()} is false). Its stream drops a second
 * publish of one {@code Nats-Msg-Id} within the duplicate window: the window here is short, and {@link #publish}
 * publishes a copy again until the stream stores it.
 */
class NatsInboxConsumerContractTest extends InboxConsumerContract<Message> {
  private static final Duration DUPLICATE_WINDOW = Duration.ofMillis(100); // JetStream's least

  private NatsFixture f;

  @BeforeEach
  void setUpNats() throws Exception {
    f = new NatsFixture(DUPLICATE_WINDOW);
  }

  @AfterEach
  void tearDownNats() throws Exception {
    if (f != null) {
      f.close();
    }
  }

  @Override
  protected InboxStore createInboxStore(DataSource dataSource, String table) {
    return JdbcInboxStore.builder(dataSource).dialect(JdbcDialect.POSTGRESQL).table(table)
        .createSchemaIfMissing(true).build();
  }

  @Override
  protected void publish(String eventId, byte[] payload) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    PublishAck ack = f.js.publish(f.subject, new Headers().put(NatsInboxConsumer.MESSAGE_ID, eventId), payload);
    while (ack.isDuplicate()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("JetStream kept dropping " + eventId + " as a duplicate for " + WAIT);
      }
      LockSupport.parkNanos(DUPLICATE_WINDOW.toNanos()); // the broker's window, not a race of the consumer's
      ack = f.js.publish(f.subject, new Headers().put(NatsInboxConsumer.MESSAGE_ID, eventId), payload);
    }
  }

  @Override
  protected void publishWithoutId(byte[] payload) throws Exception {
    f.js.publish(f.subject, payload);
  }

  @Override
  protected AutoCloseable startConsumer(ConsumerSettings settings) {
    return NatsInboxConsumer.builder(f.nats, settings.inbox(), settings.consumer(), f.stream, f.subject)
        .handler(settings.handler()).listener(settings.listener()).maxDeliver(settings.maxAttempts())
        .fetchWait(Duration.ofMillis(100)).nakBackoff(Duration.ofMillis(10), Duration.ofMillis(50)).build().start();
  }

  @Override
  protected Class<Message> messageType() {
    return Message.class;
  }

  @Override
  protected String eventIdIn(Message message) {
    return message.getHeaders().getFirst(NatsInboxConsumer.MESSAGE_ID);
  }

  @Override
  protected long unsettled() throws Exception {
    ConsumerInfo info = f.jsm.getConsumerInfo(f.stream, CONSUMER);
    return info.getNumPending() + info.getNumAckPending();
  }

  @Override
  protected boolean keepsDeadLetters() {
    return false;
  }
}
