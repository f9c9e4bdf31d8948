package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.Reason;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.messaging.support.GenericMessage;

/**
 * Where each kind of raw message parameter takes its id from, on an in-memory H2 inbox: the methods are called as a
 * container would call them, with messages made here.
 */
class ListenerIdSourcesTest {
  /** One method per kind of raw message; each records the ids it ran for. */
  public static class Methods {
    private final List<String> ran = new CopyOnWriteArrayList<>();

    public List<String> ran() {
      return ran;
    }

    @IdempotentListener(consumer = "records", offsetId = true)
    public void record(ConsumerRecord<String, String> record) {
      ran.add("record " + record.offset());
    }

    @IdempotentListener(consumer = "amqp")
    public void amqp(Message message) {
      ran.add("amqp " + message.getMessageProperties().getMessageId());
    }

    @IdempotentListener(consumer = "spring")
    public void spring(GenericMessage<String> message) {
      ran.add("spring " + message.getPayload());
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Methods.class)
  static class App {}

  private ConfigurableApplicationContext context;
  private Methods methods;

  @BeforeEach
  void start() {
    context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE).run(
        "--spring.datasource.url=jdbc:h2:mem:listeners-ids-" + UUID.randomUUID(),
        "--idem.outbox.initialize-schema=true", "--idem.listeners.max-attempts=1");
    methods = context.getBean(Methods.class);
  }

  @AfterEach
  void stop() {
    context.close();
  }

  private static ConsumerRecord<String, String> record(long offset, String id) {
    ConsumerRecord<String, String> r = new ConsumerRecord<>("listeners-ids", 1, offset, "key", "value");
    if (id != null) {
      r.headers().add(KafkaRecords.EVENT_ID_HEADER, id.getBytes(StandardCharsets.UTF_8));
    }
    return r;
  }

  @Test
  void aKafkaRecordTakesItsHeaderAndWithoutOneItsPosition() {
    methods.record(record(7, "e-1"));
    methods.record(record(8, "e-1")); // the same event at another offset
    methods.record(record(9, null));
    methods.record(record(9, null)); // the same record again

    assertThat(methods.ran()).containsExactly("record 7", "record 9");
    Inbox inbox = context.getBean(Inbox.class);
    assertThat(inbox.contains("records", "e-1")).isTrue();
    assertThat(inbox.contains("records", "listeners-ids-1@9")).isTrue();
  }

  @Test
  void anAmqpMessageTakesItsMessageId() {
    MessageProperties props = new MessageProperties();
    props.setMessageId("m-1");
    Message message = MessageBuilder.withBody("body".getBytes(StandardCharsets.UTF_8))
        .andProperties(props).build();

    methods.amqp(message);
    methods.amqp(message);
    // registered in code (no @RabbitListener), it still gives up the AMQP way: a bare exception would requeue it
    AmqpRejectAndDontRequeueException refused = catchThrowableOfType(AmqpRejectAndDontRequeueException.class,
        () -> methods.amqp(MessageBuilder.withBody(new byte[0]).build()));

    assertThat(methods.ran()).containsExactly("amqp m-1");
    assertThat(refused.getCause()).isInstanceOf(ListenerGaveUpException.class);
    assertThat(((ListenerGaveUpException) refused.getCause()).decision().reason()).isEqualTo(Reason.MISSING_ID);
  }

  @Test
  void aSpringMessageTakesItsIdHeaderAsTextOrBytesThenTheAmqpMessageId() {
    methods.spring(new GenericMessage<>("a", Map.of(KafkaRecords.EVENT_ID_HEADER, "s-1")));
    methods.spring(new GenericMessage<>("a", Map.of(KafkaRecords.EVENT_ID_HEADER,
        "s-1".getBytes(StandardCharsets.UTF_8))));
    methods.spring(new GenericMessage<>("b", Map.of("amqp_messageId", "s-2")));
    ListenerGaveUpException invalid = catchThrowableOfType(ListenerGaveUpException.class,
        () -> methods.spring(new GenericMessage<>("c", Map.of(KafkaRecords.EVENT_ID_HEADER, new byte[] {-1}))));

    assertThat(methods.ran()).containsExactly("spring a", "spring b");
    assertThat(invalid.decision().reason()).isEqualTo(Reason.INVALID_ID);
  }
}
