package dev.idem.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.test.Eventually;
import dev.idem.test.outbox.InboxConsumerContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** The inbox consumer kit on the real RabbitMQ: a queue of each test's own, dead-lettered to a second queue. */
class RabbitMqInboxConsumerContractTest extends InboxConsumerContract<Delivery> {
  private RabbitFixture f;
  private final List<String> deadLetters = new ArrayList<>();

  @BeforeEach
  void setUpRabbit() throws Exception {
    f = new RabbitFixture();
  }

  @AfterEach
  void tearDownRabbit() throws Exception {
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
    f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().messageId(eventId).deliveryMode(2).build(),
        payload);
  }

  @Override
  protected void publishWithoutId(byte[] payload) throws Exception {
    f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().deliveryMode(2).build(), payload);
  }

  @Override
  protected AutoCloseable startConsumer(ConsumerSettings settings) {
    return RabbitMqInboxConsumer.builder(Rabbit.factory(), settings.inbox(), settings.consumer(), f.queue)
        .handler(settings.handler()).listener(settings.listener()).maxFailures(settings.maxAttempts())
        .failurePause(Duration.ofMillis(1)).build().start();
  }

  @Override
  protected Class<Delivery> messageType() {
    return Delivery.class;
  }

  @Override
  protected String eventIdIn(Delivery message) {
    return message.getProperties().getMessageId();
  }

  @Override
  protected long unsettled() {
    // asked after the consumer closed its channel, which returns unacknowledged messages to the queue
    return f.ready(f.queue);
  }

  @Override
  protected List<String> deadLetterIds(int atLeast) throws Exception {
    Eventually.await("dead letters in " + f.deadLetters, WAIT, () -> deadLetters.size() + f.ready(f.deadLetters),
        n -> n >= atLeast);
    for (int i = 0; i < 10_000; i++) {
      GetResponse r = f.admin.basicGet(f.deadLetters, true);
      if (r == null) {
        break;
      }
      deadLetters.add(r.getProps().getMessageId());
    }
    return new ArrayList<>(deadLetters); // a message without an id is null here
  }
}
