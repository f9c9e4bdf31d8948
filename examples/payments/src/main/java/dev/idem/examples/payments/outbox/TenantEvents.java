package dev.idem.examples.payments.outbox;

import dev.idem.examples.payments.webhook.WebhookEvents;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Writes a tenant's event to every place it goes, on the caller's connection, in the transaction of the business
 * write that decides it (a payment captured or declined, a refund succeeded), so that the event exists if and only if
 * that write commits: one row per subscribed webhook endpoint ({@link WebhookEvents}) and, when Kafka is on and the
 * type has a topic, one row for Kafka ({@link KafkaEvents}). The two are independent: a tenant without endpoints still
 * has its events on Kafka. Thread-safe.
 */
public final class TenantEvents {
  private final WebhookEvents webhooks;
  private final KafkaEvents kafka;

  public TenantEvents(WebhookEvents webhooks, KafkaEvents kafka) {
    this.webhooks = webhooks;
    this.kafka = kafka;
  }

  /**
   * Writes the event's outbox rows on {@code c}. Does not commit.
   *
   * @param type one of {@link dev.idem.examples.payments.webhook.EventTypes}
   * @param aggregateType {@code payment} or {@code refund}
   * @param aggregateId the payment or refund id
   * @param data the resource the event is about, as its API shows it
   * @return the ids of the outbox events written: the webhooks' first, then Kafka's
   */
  public List<UUID> publish(Connection c, String tenant, String type, String aggregateType, String aggregateId,
      Map<String, Object> data, Instant created) throws SQLException {
    List<UUID> ids = new ArrayList<>(webhooks.publish(c, tenant, type, aggregateType, aggregateId, data, created));
    kafka.publish(c, tenant, type, aggregateType, aggregateId, data, created).ifPresent(ids::add);
    return ids;
  }
}
