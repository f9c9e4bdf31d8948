package dev.idem.examples.payments.provider;

import dev.idem.core.UuidV7;
import dev.idem.examples.payments.web.Json;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.webhook.WebhookSecret;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The simulated provider's webhooks: {@code charge.succeeded} and {@code refund.succeeded}, written to the outbox in
 * the provider's own transaction, the one that records the charge or refund, so that the provider announces exactly
 * what it applied. The relay's {@value #ROUTE} route sends them, signed with {@link #secret()}, to the merchant (this
 * service's {@code POST /webhooks/provider}). Thread-safe.
 *
 * <p>The payload is {@code {"id", "type", "created", "data"}}, where {@code id} is the outbox event id (sent as
 * {@code webhook-id}) and {@code data} is the charge or refund.
 */
public final class ProviderWebhooks {
  /** The relay route of the provider's webhooks. */
  public static final String ROUTE = "provider-webhook";
  /** The destination of every provider webhook: the one merchant this simulator serves. */
  public static final String DESTINATION = ROUTE + ":merchant";
  public static final String CHARGE_SUCCEEDED = "charge.succeeded";
  public static final String REFUND_SUCCEEDED = "refund.succeeded";

  private final Outbox outbox;
  private final Json json;
  private final WebhookSecret secret;

  private ProviderWebhooks(Outbox outbox, Json json, WebhookSecret secret) {
    this.outbox = outbox;
    this.json = json;
    this.secret = secret;
  }

  /** Webhooks written to {@code outbox} and signed with {@code secret}. */
  public static ProviderWebhooks to(Outbox outbox, Json json, WebhookSecret secret) {
    return new ProviderWebhooks(Objects.requireNonNull(outbox, "outbox"), Objects.requireNonNull(json, "json"),
        Objects.requireNonNull(secret, "secret"));
  }

  /** A provider that sends no webhooks. */
  public static ProviderWebhooks none() {
    return new ProviderWebhooks(null, null, null);
  }

  /** The signing secret; null when no webhooks are sent. */
  public WebhookSecret secret() {
    return secret;
  }

  void chargeSucceeded(Connection c, ProviderCharge charge) {
    write(c, CHARGE_SUCCEEDED, "charge", charge.id(), charge.toJson(), charge.createdAt());
  }

  void refundSucceeded(Connection c, ProviderRefund refund) {
    write(c, REFUND_SUCCEEDED, "refund", refund.id(), refund.toJson(), refund.createdAt());
  }

  private void write(Connection c, String type, String objectType, String objectId, Map<String, Object> data,
      Instant created) {
    if (outbox == null) {
      return;
    }
    UUID id = UuidV7.next();
    String payload = new String(json.write(Json.document("id", id.toString(), "type", type,
        "created", created.toString(), "data", data)), StandardCharsets.UTF_8);
    outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder(type).id(id).aggregate(objectType, objectId)
        .payload(payload)
        .destination(DESTINATION).build());
  }

  @Override
  public String toString() {
    return outbox == null ? "ProviderWebhooks[none]" : "ProviderWebhooks[" + DESTINATION + "]";
  }
}
