package dev.idem.spring.listener;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a {@code @KafkaListener} or {@code @RabbitListener} method through Idem's inbox: each message id takes effect
 * once for {@link #consumer()}. The method runs in a Spring transaction of the inbox's {@code DataSource} that also
 * records (consumer, message id); its {@code JdbcTemplate}, JPA and {@code @Transactional} (default propagation) work
 * joins that transaction. The transaction commits before the method returns to the container, so the container
 * acknowledges the message (RabbitMQ) or commits its offset (Kafka) only after the effect is durable. A redelivery,
 * or the same message published twice, finds the record and skips the method.
 *
 * <pre>{@code
 * @KafkaListener(topics = "payments")
 * @IdempotentListener(consumer = "billing")
 * void on(ConsumerRecord<String, String> record) { jdbc.update("insert ...", ...); }
 * }</pre>
 *
 * <p>The message id comes from {@link #id()} when set, otherwise from the raw message parameter: a Kafka
 * {@code ConsumerRecord}'s {@code idem-event-id} header, an AMQP {@code Message}'s {@code messageId}, or a Spring
 * {@code Message<?>}'s {@code idem-event-id} or {@code amqp_messageId} header. Failures follow the one rule of Idem's
 * consumers ({@code dev.idem.outbox.consumer.ConsumerEngine}): see docs/listeners.md. The method must return void.
 * A method that breaks a rule fails the application at startup, naming it.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface IdempotentListener {

  /**
   * The inbox's consumer name: the scope of the message ids (1 to 255 characters, no control characters), one per
   * method of the application. Renaming it makes every message new again.
   */
  String consumer();

  /**
   * A SpEL expression over the method's parameters (by name, {@code #order.id}) giving the message id; empty (the
   * default): the raw message parameter's id. A message whose id is null or blank is rejected, never retried.
   */
  String id() default "";

  /**
   * Kafka only: a record without the {@code idem-event-id} header (and no {@link #id()}) takes
   * {@code <topic>-<partition>@<offset>} as its id, as {@code KafkaInboxConsumer.OFFSET_ID} does. Only a redelivery
   * of the same record is then a duplicate, never the same event published twice. Off by default: such a record is
   * rejected to the dead-letter topic.
   */
  boolean offsetId() default false;
}
