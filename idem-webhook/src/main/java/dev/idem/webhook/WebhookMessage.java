package dev.idem.webhook;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A webhook that passed verification, as an {@code InboxHandler} finds it in
 * {@code event.message(WebhookMessage.class)}: its id ({@code webhook-id}, the same on every redelivery), the
 * sender's timestamp ({@code webhook-timestamp}), the raw body exactly as signed, and the request's other headers.
 * The {@code webhook-signature} header is not kept. Immutable and thread-safe.
 */
public final class WebhookMessage {
  private final String id;
  private final Instant timestamp;
  private final byte[] body;
  private final Map<String, String> headers;

  /**
   * A message.
   *
   * @param headers header names (any case) to their first value
   */
  public WebhookMessage(String id, Instant timestamp, byte[] body, Map<String, String> headers) {
    this.id = Objects.requireNonNull(id, "id");
    this.timestamp = Objects.requireNonNull(timestamp, "timestamp");
    this.body = Objects.requireNonNull(body, "body").clone();
    TreeMap<String, String> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    Objects.requireNonNull(headers, "headers").forEach((k, v) -> {
      if (k != null && v != null && !k.equalsIgnoreCase(WebhookReceiverServlet.SIGNATURE_HEADER)) {
        copy.putIfAbsent(k.toLowerCase(Locale.ROOT), v);
      }
    });
    this.headers = Collections.unmodifiableSortedMap(copy);
  }

  /** The {@code webhook-id}: the event's id, stable across the sender's retries and the inbox's key. */
  public String id() {
    return id;
  }

  /** The {@code webhook-timestamp} of this delivery (a redelivery carries a newer one). */
  public Instant timestamp() {
    return timestamp;
  }

  /** The raw body, exactly the bytes that were signed (a copy). */
  public byte[] body() {
    return body.clone();
  }

  /** The body decoded as UTF-8, as JSON webhooks are. */
  public String bodyText() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The body's length in bytes. */
  public int bodyLength() {
    return body.length;
  }

  /** The first value of a request header, by case-insensitive name; never {@code webhook-signature}. */
  public Optional<String> header(String name) {
    return Optional.ofNullable(headers.get(name));
  }

  /** Every request header's first value, by lower-case name, without {@code webhook-signature}. */
  public Map<String, String> headers() {
    return headers;
  }

  @Override
  public String toString() {
    return "WebhookMessage{" + id + ", " + timestamp + ", " + body.length + " bytes}";
  }
}
