package dev.idem.outbox.consumer;

/**
 * Hooks for meters and logs on an inbox consumer: one listener type for the RabbitMQ, NATS and Kafka consumers. Called
 * on the consumer's threads; implementations must be fast, thread-safe and must not throw (what they throw, an
 * {@link Error} included, is ignored). Every method does nothing by default. The inbox's own
 * {@link dev.idem.outbox.InboxListener} counts processed and duplicate events as well.
 *
 * <p>{@code consumer} is the inbox's consumer name; {@code source} where the message came from: the queue
 * (RabbitMQ), the subject (NATS), or the partition as {@code <topic>-<partition>} (Kafka). {@code messageId} is the
 * message's id, or null when it has none.
 *
 * <pre>{@code
 * ConsumerListener listener = new ConsumerListener() {
 *   public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
 *     alerts.raise(consumer + " gave up on " + messageId + " from " + source + ": " + decision.reason().code());
 *   }
 * };
 * }</pre>
 */
public interface ConsumerListener {
  /** The handler ran, its transaction committed and the broker was answered (acknowledged, offset committed). */
  default void processed(String consumer, String source, String messageId) {}

  /** The inbox had processed the message before; it was acknowledged without running the handler. */
  default void duplicate(String consumer, String source, String messageId) {}

  /**
   * The inbox transaction of {@code messages} messages committed ({@code duplicates} of them were duplicates); the
   * broker is answered next. A crash between the two redelivers them, and the inbox skips them.
   *
   * @param nextOffset Kafka: the offset committed next; -1 on brokers without offsets
   */
  default void committed(String consumer, String source, long nextOffset, int messages, int duplicates) {}

  /**
   * The message failed and is tried again after {@link Decision#after()} ({@link Action#RETRY}). {@link
   * Decision#counted()} tells a failure of its work ({@code handler_failed}, {@link Decision#attempts()} counted so
   * far) from a passing conflict ({@code contention}, not counted).
   */
  default void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {}

  /**
   * The database is away ({@link Action#PAUSE}): the consumer waits {@link Decision#after()} and tries the message
   * again, counting the failure against no message.
   */
  default void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {}

  /**
   * The message was refused without running its handler and will not be tried again ({@link Action#REJECT}):
   * rejected without requeue or republished to its dead-letter exchange (RabbitMQ; reported once confirmed),
   * terminated (NATS), sent to the dead-letter topic (Kafka).
   *
   * @param reason {@code MISSING_ID}, {@code INVALID_ID} or {@code TOO_LARGE}
   * @param detail what was wrong, for a log
   */
  default void rejected(String consumer, String source, String messageId, Reason reason, String detail) {}

  /**
   * The consumer gave up on the message ({@link Action#DEAD_LETTER}): its handler failed
   * {@link Decision#attempts()} times, or its id came with another payload. It went to the consumer's dead-letter
   * exchange, confirmed (RabbitMQ with one), or was rejected to the queue's dead-letter exchange if there is one
   * (RabbitMQ without one, or after its dead letter kept failing), went to the dead-letter subject and was then
   * terminated (NATS with one; terminated alone without), or went to the dead-letter topic (Kafka). Reported once the
   * dead letter was written (confirmed, or acknowledged by the JetStream stream), not before.
   */
  default void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {}

  /**
   * Sending the message to a dead-letter destination the consumer writes itself (Kafka's dead-letter topic, RabbitMQ's
   * dead-letter exchange of the consumer or the starter's listeners, NATS's dead-letter subject) failed: it is sent
   * again after a pause, without running the handler again, while the consumer remembers its id (up to 10,000 ids;
   * not across a restart). RabbitMQ gives up after a bounded number of failures in a row and rejects the message
   * without requeue instead. NATS hands the message back ({@code nak}) and never terminates it without a stored copy;
   * its redelivery runs the handler again.
   */
  default void deadLetterFailed(String consumer, String source, String messageId, Throwable error) {}

  /**
   * Answering the broker failed (an ack, nack or term on a closed channel or connection; a Kafka offset commit, then
   * with a null {@code messageId}): the broker delivers the message again, and the inbox skips it if it committed.
   */
  default void answerFailed(String consumer, String source, String messageId, Throwable error) {}

  /**
   * Receiving from the broker failed (a NATS fetch, a Kafka poll; RabbitMQ cancelled a subscription, or subscribing
   * again failed); the consumer waits and tries again.
   */
  default void receiveFailed(String consumer, String source, Throwable error) {}

  /**
   * The consumer stopped for good on {@code error} (an {@link OutOfMemoryError} or another error it cannot go on
   * after; RabbitMQ: a connection that will not recover). Restart it, or the process.
   */
  default void stopped(String consumer, Throwable error) {}

  /**
   * Runs {@code call} (a call to a listener) so that nothing it throws changes what the consumer does: a {@link
   * VirtualMachineError} is rethrown, anything else ignored.
   */
  static void safely(Runnable call) {
    try {
      call.run();
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable ignored) {
      // a listener must not change the outcome
    }
  }
}
