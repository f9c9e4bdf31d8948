package dev.idem.nats;

/**
 * Hooks for meters and logs on a {@link NatsInboxConsumer}. Called on the consumer's thread; implementations must be
 * fast and must not throw (what they throw is ignored). Every method does nothing by default. The
 * {@link dev.idem.outbox.InboxListener} of the inbox counts processed and duplicate events as well.
 *
 * <pre>{@code
 * NatsConsumerListener listener = new NatsConsumerListener() {
 *   public void payloadMismatch(String consumer, String subject, String messageId) {
 *     alerts.raise("event " + messageId + " on " + subject + " changed its payload");
 *   }
 * };
 * }</pre>
 */
public interface NatsConsumerListener {
  /** The message was processed (or found to be a duplicate), committed and acknowledged. */
  default void acknowledged(String consumer, String subject, String messageId, boolean duplicate) {}

  /**
   * The handler or the database failed (an exception or an {@link Error}); the message was negatively acknowledged
   * ({@code nak}, with the configured delay) for another try.
   */
  default void failed(String consumer, String subject, String messageId, Throwable error) {}

  /**
   * The handler or the database failed on the last delivery {@link NatsInboxConsumer.Builder#maxDeliver} allows; the
   * message was terminated ({@code term}) and JetStream will not deliver it again.
   *
   * @param deliveries how many times JetStream delivered the message
   */
  default void gaveUp(String consumer, String subject, String messageId, long deliveries, Throwable error) {}

  /** The message's id was processed before with another payload; the message was terminated ({@code term}). */
  default void payloadMismatch(String consumer, String subject, String messageId) {}

  /** The message was terminated for {@code reason}, e.g. it had no {@code Nats-Msg-Id}. */
  default void rejected(String consumer, String subject, String reason) {}

  /** Fetching from JetStream failed (e.g. while the connection is down); the consumer waits and tries again. */
  default void fetchFailed(String consumer, String subject, Throwable error) {}
}
