package dev.idem.nats;

import dev.idem.outbox.OutboxMessage;
import io.nats.client.api.PublishAck;

/**
 * Hooks for meters on a {@link NatsJetStreamTransport}. Called on relay threads; implementations must be fast,
 * thread-safe and must not throw (what they throw is ignored).
 *
 * <pre>{@code
 * NatsPublishListener listener = (message, ack) -> {
 *   if (ack.isDuplicate()) {
 *     duplicates.increment(); // the stream had it already: a re-send within its duplicate window
 *   }
 * };
 * }</pre>
 */
@FunctionalInterface
public interface NatsPublishListener {
  /**
   * The stream acknowledged {@code message}; {@link PublishAck#isDuplicate()} when it had stored the same
   * {@code Nats-Msg-Id} within its duplicate window and dropped this copy.
   */
  void published(OutboxMessage message, PublishAck ack);
}
