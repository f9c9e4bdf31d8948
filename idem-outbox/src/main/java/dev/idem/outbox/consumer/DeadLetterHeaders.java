package dev.idem.outbox.consumer;

import dev.idem.outbox.OutboxTransport;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Idem's dead-letter headers, the same on every broker: a message given up on is sent to its dead-letter destination
 * with its own headers plus {@code idem-dlt-reason} ({@link Reason#code()}), {@code idem-dlt-consumer}, where it came
 * from ({@code idem-dlt-topic}, {@code -partition}, {@code -offset} on Kafka; {@code idem-dlt-queue},
 * {@code -exchange}, {@code -routing-key} on RabbitMQ; {@code idem-dlt-stream}, {@code -subject},
 * {@code -stream-sequence} and {@code -message-id} on NATS), {@code idem-dlt-attempts} (the failures counted; 0 for a
 * refusal) and one {@code idem-dlt-attempt-<n>} per failure, oldest first ({@code <instant> <Exception>: <message>}).
 * Every value is text. The history keeps the last {@value #MAX_HISTORY} failures, each at most
 * {@value #MAX_ERROR_CHARS} characters. Stateless.
 */
public final class DeadLetterHeaders {
  /** What every header name of Idem's dead letters starts with. */
  public static final String PREFIX = "idem-dlt-";
  /** The failures a history keeps: the last ones. */
  public static final int MAX_HISTORY = 20;
  /** The longest error text of one failure line. */
  public static final int MAX_ERROR_CHARS = 500;

  private DeadLetterHeaders() {}

  /** One failure line: {@code <at> <Exception>: <message>}, the error text cut at {@value #MAX_ERROR_CHARS}. */
  public static String attempt(Instant at, Throwable error) {
    String text = OutboxTransport.describe(error);
    return at + " " + (text.length() > MAX_ERROR_CHARS ? text.substring(0, MAX_ERROR_CHARS) : text);
  }

  /** {@code history} with {@code line} added: a new unmodifiable list of at most {@value #MAX_HISTORY} lines. */
  public static List<String> append(List<String> history, String line) {
    List<String> next = new ArrayList<>(history);
    next.add(Objects.requireNonNull(line, "line"));
    return List.copyOf(next.subList(Math.max(0, next.size() - MAX_HISTORY), next.size()));
  }

  /** Whether a header is one of Idem's dead-letter headers (dropped from a message that is dead-lettered again). */
  public static boolean isOwn(String name) {
    return name != null && name.startsWith(PREFIX);
  }

  /** {@link #of(Decision, String, Map, List, int)} without a size limit. */
  public static Map<String, String> of(Decision decision, String consumer, Map<String, String> origin,
      List<String> history) {
    return of(decision, consumer, origin, history, Integer.MAX_VALUE);
  }

  /**
   * The headers of a message given up on, in order, named with {@link #PREFIX}.
   *
   * @param decision {@code DEAD_LETTER} or {@code REJECT}: the reason and the attempts counted
   * @param consumer the inbox's consumer name
   * @param origin where the message came from, names without the prefix (e.g. {@code topic}, {@code queue},
   *     {@code stream}); null
   *     values are left out
   * @param history one line per counted failure, oldest first
   * @param maxBytes the most UTF-8 bytes the names and values may take together: the oldest failure lines are left
   *     out until they fit (the others are always written)
   */
  public static Map<String, String> of(Decision decision, String consumer, Map<String, String> origin,
      List<String> history, int maxBytes) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(PREFIX + "reason", decision.reason().code());
    headers.put(PREFIX + "consumer", Objects.requireNonNull(consumer, "consumer"));
    origin.forEach((name, value) -> {
      if (value != null) {
        headers.put(PREFIX + name, value);
      }
    });
    int attempts = decision.action() == Action.REJECT ? 0 : decision.attempts();
    headers.put(PREFIX + "attempts", Integer.toString(attempts));
    long room = maxBytes - bytes(headers);
    int first = history.size();
    while (first > 0) {
      String line = history.get(first - 1);
      long size = bytes(PREFIX + "attempt-" + first) + line.getBytes(StandardCharsets.UTF_8).length;
      if (size > room) {
        break;
      }
      room -= size;
      first--;
    }
    for (int i = first; i < history.size(); i++) {
      headers.put(PREFIX + "attempt-" + (i - first + 1), history.get(i));
    }
    return headers;
  }

  private static long bytes(Map<String, String> headers) {
    long n = 0;
    for (Map.Entry<String, String> e : headers.entrySet()) {
      n += bytes(e.getKey()) + bytes(e.getValue());
    }
    return n;
  }

  private static long bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length;
  }
}
