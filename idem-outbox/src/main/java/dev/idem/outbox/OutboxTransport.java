package dev.idem.outbox;

import java.util.ArrayList;
import java.util.List;

/**
 * Sends outbox messages to one kind of destination: HTTP webhooks, a RabbitMQ exchange, a NATS JetStream subject.
 * A relay calls it outside any database transaction or row lock, from its own threads.
 *
 * <p>Delivery is at least once: a relay that crashes after sending and before marking the event delivered sends it
 * again once its lease ends. Send the event id as the message id so that receivers (an {@link Inbox}, JetStream's
 * duplicate window) can drop the copy.
 *
 * <p>Implementations must be thread-safe. A transport that can pipeline (publisher confirms, async publish) overrides
 * {@link #sendAll}; the default sends one message at a time.
 */
public interface OutboxTransport extends AutoCloseable {
  /**
   * Sends one message. Return a {@link DeliveryResult} for failures the transport understands; an exception counts as
   * a failure to retry, its message kept in the attempt history.
   */
  DeliveryResult send(OutboxMessage message) throws Exception;

  /** Sends a batch; returns one result per message, in order. */
  default List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    List<DeliveryResult> results = new ArrayList<>(messages.size());
    for (OutboxMessage m : messages) {
      DeliveryResult r;
      try {
        r = send(m);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        r = DeliveryResult.retry("interrupted", null);
      } catch (Exception e) {
        r = DeliveryResult.retry(describe(e), null);
      }
      results.add(r == null ? DeliveryResult.retry("transport returned no result", null) : r);
    }
    return results;
  }

  /** Releases the transport's connections. */
  @Override
  default void close() throws Exception {}

  /** An exception as a one-line error for the attempt history: its class and message. */
  static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message.replace('\n', ' '));
  }
}
