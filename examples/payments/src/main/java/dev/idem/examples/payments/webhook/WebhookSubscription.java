package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A tenant's webhook endpoint as the tenant sees it, without its secret (shown once, when it is created).
 *
 * @param id {@code we_...}; the destination of its events is {@code webhook:<id>}
 * @param events the event types it receives, or just {@code "*"} for all of them
 * @param enabled false once disabled (it answered 410 Gone): events to it die without a request
 * @param disabledReason why it was disabled, or null
 */
public record WebhookSubscription(String id, String tenant, String url, List<String> events, boolean enabled,
    Instant createdAt, String disabledReason) {

  public WebhookSubscription {
    events = List.copyOf(events);
  }

  /** Whether an event of {@code type} goes to this endpoint. */
  public boolean receives(String type) {
    return enabled && (events.contains(EventTypes.ALL) || events.contains(type));
  }

  public Map<String, Object> toJson() {
    return Json.document("id", id, "url", url, "events", events, "enabled", enabled,
        "created_at", createdAt.toString(), "disabled_reason", disabledReason);
  }
}
