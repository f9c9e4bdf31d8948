package dev.idem.rabbitmq;

/**
 * Hooks for meters and logs on a {@link RabbitMqInboxConsumer}. Called on the client's consumer threads;
 * implementations must be fast, thread-safe and must not throw (what they throw is ignored). Every method does nothing
 * by default. The {@link dev.idem.outbox.InboxListener} of the inbox counts processed and duplicate events as well.
 *
 * <pre>{@code
 * RabbitMqConsumerListener listener = new RabbitMqConsumerListener() {
 *   public void payloadMismatch(String consumer, String queue, String messageId) {
 *     alerts.raise("event " + messageId + " on " + queue + " changed its payload");
 *   }
 * };
 * }</pre>
 */
public interface RabbitMqConsumerListener {
  /** The message was processed (or found to be a duplicate), committed and acknowledged. */
  default void acknowledged(String consumer, String queue, String messageId, boolean duplicate) {}

  /**
   * The handler or the database failed (an exception or an {@link Error}); the message was requeued
   * ({@code basic.nack}, requeue) for another try.
   */
  default void failed(String consumer, String queue, String messageId, Throwable error) {}

  /**
   * The handler or the database failed on this message id for the
   * {@link RabbitMqInboxConsumer.Builder#maxFailures}-th time: it was rejected without requeue, so it goes to the
   * queue's dead-letter exchange when there is one and is dropped otherwise.
   *
   * @param failures the failures counted for this message id
   */
  default void gaveUp(String consumer, String queue, String messageId, int failures, Throwable error) {}

  /**
   * The message's id was processed before with another payload: it was rejected without requeue, so it goes to the
   * queue's dead-letter exchange when there is one and is dropped otherwise.
   */
  default void payloadMismatch(String consumer, String queue, String messageId) {}

  /** The message was rejected without requeue for {@code reason}, e.g. it had no {@code message-id}. */
  default void rejected(String consumer, String queue, String reason) {}
}
