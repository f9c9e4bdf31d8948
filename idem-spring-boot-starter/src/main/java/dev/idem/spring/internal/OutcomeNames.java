package dev.idem.spring.internal;

import dev.idem.core.Execution;
import java.util.Locale;

/**
 * The names of the executor's outcomes in meter tags ({@code outcome} of {@code idem.requests}), span attributes
 * ({@code idem.outcome}) and logs: {@code created}, {@code replayed}, {@code mismatch}, {@code in_progress},
 * {@code released}, {@code key_expired}, {@code uncertain}. Needs neither Micrometer nor OpenTelemetry.
 */
public final class OutcomeNames {
  private OutcomeNames() {}

  /** The name of {@code outcome}. */
  public static String of(Execution.Outcome outcome) {
    switch (outcome) {
      case STORED:
        return "created";
      case REPLAYED:
        return "replayed";
      case PAYLOAD_MISMATCH:
        return "mismatch";
      case IN_PROGRESS:
        return "in_progress";
      case NOT_STORED:
        return "released";
      case KEY_EXPIRED:
        return "key_expired";
      case UNCERTAIN:
        return "uncertain";
      default:
        return outcome.name().toLowerCase(Locale.ROOT);
    }
  }
}
