package dev.idem.spring.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The inbox consumer names of the application's entry points (the consumers of {@code idem.consumers.*}, the webhook
 * receivers of {@code idem.outbox.webhooks.receivers.*}, the {@code @IdempotentListener} methods), each with the
 * place that declares it: two entry points must not share a name, since a message one of them processed would be a
 * duplicate to the other, which would skip it. (Webhook receivers may share one among themselves: the caller adds
 * such a name once.) Not thread-safe: filled and checked once, at startup.
 */
public final class ConsumerNames {
  private final Map<String, String> places = new LinkedHashMap<>();

  /**
   * Adds {@code consumer}, declared at {@code place}; a blank name is left to the check of its own entry point.
   *
   * @throws IllegalStateException naming both places, when another entry point declared the name already
   */
  public ConsumerNames add(String consumer, String place) {
    if (consumer == null || consumer.isBlank()) {
      return this;
    }
    String previous = places.putIfAbsent(consumer, place);
    if (previous != null) {
      throw new IllegalStateException("inbox consumer '" + consumer + "' is declared twice: by " + previous
          + " and by " + place + "; each entry point needs a consumer name of its own (a message one of them"
          + " processed would be a duplicate to the other, which would skip it)");
    }
    return this;
  }
}
