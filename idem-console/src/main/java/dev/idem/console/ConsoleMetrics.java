package dev.idem.console;

import java.time.Instant;
import java.util.Map;

/**
 * The numbers behind the console's charts, when the application has them (the Spring Boot starter supplies them from
 * Micrometer). Without one, the console has no charts tab. The document, of JSON-ready values (maps, lists,
 * strings, numbers, booleans, nulls):
 *
 * <pre>{@code
 * {"requests": {"created": 12, "replayed": 3, "mismatch": 0, "in_progress": 1, "released": 0},
 *  "replay_key_age": {"count": 3, "sum_seconds": 4.5, "max_seconds": 2.0,
 *                     "buckets": [{"le_seconds": 1.0, "count": 1}, ..., {"le_seconds": null, "count": 0}]}}
 * }</pre>
 *
 * {@code requests} holds cumulative counts of requests per outcome (the page turns successive readings into rates);
 * {@code replay_key_age} a histogram of the key's age when a request was replayed. Thread-safe.
 */
@FunctionalInterface
public interface ConsoleMetrics {

  /** The current counts; the console adds {@code at} ({@code now} in epoch milliseconds). */
  Map<String, Object> summary(Instant now);
}
