package dev.idem.outbox.webhook;

import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** Where a {@link WebhookTransport} looks endpoints up: usually the application's own table of subscriptions. */
public interface WebhookEndpoints {
  /** The endpoint with this id, enabled or not. */
  Optional<WebhookEndpoint> find(String id);

  /** Marks the endpoint disabled (it answered 410 Gone); later events to it die without a request. */
  void disable(String id, String reason);

  /** A fixed set of endpoints held in memory, for tests and small set-ups. */
  static WebhookEndpoints of(WebhookEndpoint... endpoints) {
    Map<String, WebhookEndpoint> map = new ConcurrentHashMap<>();
    Arrays.stream(endpoints).forEach(e -> map.put(e.id(), e));
    return new WebhookEndpoints() {
      @Override
      public Optional<WebhookEndpoint> find(String id) {
        return Optional.ofNullable(map.get(id));
      }

      @Override
      public void disable(String id, String reason) {
        map.computeIfPresent(id, (k, e) -> new WebhookEndpoint(e.id(), e.url(), e.secrets(), false));
      }
    };
  }
}
