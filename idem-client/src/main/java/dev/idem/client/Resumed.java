package dev.idem.client;

import java.util.Objects;
import java.util.Optional;

/**
 * What {@link IdempotentHttpClient#resumePending()} made of one pending intent: its final {@link Response}, or the
 * exception that ended it (an {@link IntentPendingException} leaves it pending for the next resume). Immutable.
 */
public record Resumed(Intent intent, Optional<Response> response, Optional<RuntimeException> failure) {
  public Resumed {
    Objects.requireNonNull(intent, "intent");
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(failure, "failure");
  }

  /** Whether the intent got a final answer and left the journal. */
  public boolean isCompleted() {
    return response.isPresent() || failure.filter(KeyRefusedException.class::isInstance).isPresent();
  }
}
