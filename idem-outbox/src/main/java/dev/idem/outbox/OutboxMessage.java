package dev.idem.outbox;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * An event as a relay hands it to a transport.
 *
 * @param id the event id: send it as the message id so that receivers can deduplicate
 * @param type the event type
 * @param aggregateType the aggregate's type
 * @param aggregateId the aggregate's id: the partition or ordering key where a transport has one
 * @param payload the JSON payload
 * @param headers the event's headers
 * @param destination the full destination, {@code <route>:<detail>}
 * @param attempt which attempt this is, from 1
 * @param createdAt when the event was enqueued
 */
public record OutboxMessage(UUID id, String type, String aggregateType, String aggregateId, String payload,
    Map<String, String> headers, String destination, int attempt, Instant createdAt) {

  /** The destination without its route: {@code we_123} for {@code webhook:we_123}, empty when there is none. */
  public String destinationDetail() {
    int colon = destination.indexOf(':');
    return colon < 0 ? "" : destination.substring(colon + 1);
  }
}
