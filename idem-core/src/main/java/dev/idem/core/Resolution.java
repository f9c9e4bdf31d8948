package dev.idem.core;

import java.time.Instant;
import java.util.Objects;

/**
 * A decision about an {@link RecordState#UNCERTAIN} record, by a {@link Reconciler} or an operator: complete it with a
 * given answer, fail it with a given answer, or send it back to work ({@link Action#RETRY}). Immutable. The store
 * applies it with {@code IdempotencyAdmin.resolve}, conditional on the record's version, and keeps an
 * {@link AuditEntry} of it.
 *
 * @param action what to do
 * @param response the answer a replay returns from now on: a status below 400 for {@link Action#COMPLETE}, a 4xx for
 *     {@link Action#FAIL}; {@code null} for {@link Action#RETRY}
 * @param actor who decided: an operator's name, or {@code reconciler '<instance>'}; 1 to {@value #MAX_ACTOR}
 *     characters
 * @param reason why, for the audit; 1 to {@value #MAX_REASON} characters
 * @param at when the decision was taken
 */
public record Resolution(Action action, StoredResponse response, String actor, String reason, Instant at) {
  /** The longest actor the audit keeps. */
  public static final int MAX_ACTOR = 255;
  /** The longest reason the audit keeps. */
  public static final int MAX_REASON = 1000;

  /** What a resolution does to the record. */
  public enum Action {
    /** The outside effect happened: the record ends COMPLETED with the given answer. */
    COMPLETE,
    /** The outside effect did not happen and will not: the record ends FAILED with the given answer. */
    FAIL,
    /** Resume again: the record goes back to IN_PROGRESS with its resume count reset. */
    RETRY
  }

  public Resolution {
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(at, "at");
    actor = text("actor", actor, MAX_ACTOR);
    reason = text("reason", reason, MAX_REASON);
    switch (action) {
      case COMPLETE -> {
        Objects.requireNonNull(response, "response");
        if (response.status() >= 400) {
          throw new IllegalArgumentException("a completed record answers with a status below 400, got "
              + response.status());
        }
      }
      case FAIL -> {
        Objects.requireNonNull(response, "response");
        if (response.status() < 400 || response.status() > 499) {
          throw new IllegalArgumentException("a failed record answers with a 4xx status (a deterministic failure),"
              + " got " + response.status());
        }
      }
      case RETRY -> {
        if (response != null) {
          throw new IllegalArgumentException("a retry has no response");
        }
      }
    }
  }

  /** Complete the record with {@code response} (a status below 400). */
  public static Resolution complete(StoredResponse response, String actor, String reason, Instant at) {
    return new Resolution(Action.COMPLETE, response, actor, reason, at);
  }

  /** Fail the record with {@code response} (a 4xx). */
  public static Resolution fail(StoredResponse response, String actor, String reason, Instant at) {
    return new Resolution(Action.FAIL, response, actor, reason, at);
  }

  /** Send the record back to work: in progress, lease expired, resume count reset. */
  public static Resolution retry(String actor, String reason, Instant at) {
    return new Resolution(Action.RETRY, null, actor, reason, at);
  }

  /** The state the record ends in. */
  public RecordState toState() {
    return switch (action) {
      case COMPLETE -> RecordState.COMPLETED;
      case FAIL -> RecordState.FAILED;
      case RETRY -> RecordState.IN_PROGRESS;
    };
  }

  private static String text(String name, String value, int max) {
    Objects.requireNonNull(value, name);
    String stripped = value.strip();
    if (stripped.isEmpty() || stripped.length() > max) {
      throw new IllegalArgumentException(name + " must be 1 to " + max + " characters, got " + stripped.length());
    }
    for (int i = 0; i < stripped.length(); i++) {
      if (Character.isISOControl(stripped.charAt(i))) {
        throw new IllegalArgumentException(name + " must not hold control characters");
      }
    }
    return stripped;
  }
}
