package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.web.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * The payload of every event the service publishes, to a tenant's webhook endpoint and to Kafka alike:
 * {@code {"id", "type", "created", "data"}}, where {@code id} is the outbox event id (sent beside it as
 * {@code webhook-id} or {@code idem-event-id}, so that a receiver deduplicates on either) and {@code data} is the
 * resource as the API shows it. Stateless.
 */
public final class EventEnvelope {
  private EventEnvelope() {}

  /** The envelope of event {@code id} as JSON text. */
  public static String write(Json json, UUID id, String type, Instant created, Map<String, Object> data) {
    return new String(json.write(Json.document("id", id.toString(), "type", type, "created", created.toString(),
        "data", data)), StandardCharsets.UTF_8);
  }
}
