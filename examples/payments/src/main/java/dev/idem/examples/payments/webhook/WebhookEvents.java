package dev.idem.examples.payments.webhook;

import dev.idem.core.UuidV7;
import dev.idem.examples.payments.web.Json;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Writes a tenant's events to the outbox on the caller's connection, in the transaction of the business write that
 * decides them (a payment captured or declined, a refund succeeded): the event exists if and only if that write
 * commits. One outbox row per enabled endpoint of the tenant that receives the type, sent to
 * {@code webhook:<endpoint id>}; no subscriber, no row.
 *
 * <p>The payload is the {@link EventEnvelope} {@code {"id", "type", "created", "data"}}, whose {@code id} is the outbox
 * event id, which the webhook transport sends as {@code webhook-id}: a receiver deduplicates on either. The business
 * code calls this through {@link dev.idem.examples.payments.outbox.TenantEvents}, which also writes the event for
 * Kafka when that is on. Thread-safe.
 */
public final class WebhookEvents {
  /** The route of tenants' webhooks on the relay. */
  public static final String ROUTE = "webhook";

  private final Outbox outbox;
  private final JdbcWebhookEndpoints endpoints;
  private final Json json;

  public WebhookEvents(Outbox outbox, JdbcWebhookEndpoints endpoints, Json json) {
    this.outbox = outbox;
    this.endpoints = endpoints;
    this.json = json;
  }

  /**
   * Writes the event for each subscribed endpoint on {@code c}. Does not commit.
   *
   * @param aggregateType {@code payment} or {@code refund}
   * @param data the resource the event is about, as its API shows it
   * @return the ids of the events written, one per subscribed endpoint
   */
  public List<UUID> publish(Connection c, String tenant, String type, String aggregateType, String aggregateId,
      Map<String, Object> data, Instant created) throws SQLException {
    List<String> subscribers = endpoints.subscribers(c, tenant, type);
    if (subscribers.isEmpty()) {
      return List.of();
    }
    List<OutboxEvent> events = new ArrayList<>(subscribers.size());
    for (String endpoint : subscribers) {
      UUID id = UuidV7.next();
      String payload = EventEnvelope.write(json, id, type, created, data);
      events.add(OutboxEvent.builder(type).id(id).aggregate(aggregateType, aggregateId).payload(payload)
          .destination(ROUTE + ":" + endpoint).build());
    }
    return outbox.enqueueAll(JdbcTransaction.of(c), events);
  }
}
