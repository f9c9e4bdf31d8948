package dev.idem.examples.payments.outbox;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each event the relay gives up on, and relay errors, so that an operator knows to look at
 * {@code GET /admin/outbox?status=dead}. Logs ids, types, destinations and errors; never payloads or secrets.
 */
final class DeadEventLog implements OutboxListener {
  private static final Logger LOG = LoggerFactory.getLogger(DeadEventLog.class);

  @Override
  public void failed(String relay, OutboxMessage message, DeliveryResult result, boolean dead) {
    if (dead) {
      LOG.warn("relay {}: event {} ({}) to {} is dead after attempt {}: {}", relay, message.id(), message.type(),
          message.destination(), message.attempt(), result.error().orElse("failed"));
    }
  }

  @Override
  public void relayError(String relay, Throwable error) {
    LOG.warn("relay {}: {}", relay, error.toString());
  }
}
