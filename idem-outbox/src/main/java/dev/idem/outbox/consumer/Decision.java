package dev.idem.outbox.consumer;

import java.time.Duration;
import java.util.Objects;

/**
 * What a consumer does with a message, and why: the answer of {@link ConsumerEngine}.
 *
 * @param action what to do
 * @param reason why: the inbox's outcome or the kind of failure
 * @param after how long to wait before the next try ({@link Action#RETRY}, {@link Action#PAUSE}); zero otherwise
 * @param attempts the failures counted against the message so far, this one included when it {@link #counted()}; 0
 *     for an acknowledgement or a refusal
 */
public record Decision(Action action, Reason reason, Duration after, int attempts) {
  public Decision {
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(after, "after");
    if (after.isNegative() || attempts < 0) {
      throw new IllegalArgumentException("after and attempts must not be negative, got " + after + ", " + attempts);
    }
  }

  /**
   * Whether this failure counts against the message: a failure of its handler or a payload mismatch; never an outage,
   * a passing conflict within its allowance, or a refusal.
   */
  public boolean counted() {
    return reason == Reason.HANDLER_FAILED || reason == Reason.PAYLOAD_MISMATCH;
  }

  /** Whether the broker keeps the message for another try ({@link Action#RETRY} or {@link Action#PAUSE}). */
  public boolean triesAgain() {
    return action == Action.RETRY || action == Action.PAUSE;
  }

  @Override
  public String toString() {
    return action + "(" + reason.code() + (triesAgain() ? ", after " + after.toMillis() + " ms" : "")
        + (attempts > 0 ? ", attempt " + attempts : "") + ")";
  }
}
