package dev.idem.console;

import dev.idem.core.IdempotencyRecord;
import java.util.Map;

/**
 * What the application knows about a record that helps an operator decide it: for an uncertain payment, say, the
 * idempotency key its call to the provider carried ({@code record.derive("charge")}), by which the operator looks the
 * call up there. The console shows the hints with the record (the key's tooltip) and when it asks for a resolution.
 * Called for every record on a page, on the request's thread: quick, no remote calls. Thread-safe.
 */
@FunctionalInterface
public interface RecordHints {
  /** The most hints a record shows. */
  int MAX_HINTS = 8;

  /**
   * The hints of {@code record}, by name (such as {@code provider key}); empty for none. Names and values are shown
   * as text; at most {@value #MAX_HINTS}, each cut at 200 characters.
   */
  Map<String, String> hints(IdempotencyRecord record);

  /** No hints. */
  static RecordHints none() {
    return record -> Map.of();
  }
}
