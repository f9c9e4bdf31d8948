package dev.idem.client;

import java.util.Objects;

/**
 * One line of a call's attempt log: which attempt, how long the client waited before it, what came back and why the
 * client went on or stopped. Immutable.
 *
 * @param attempt 1 for the first attempt
 * @param delayMillis the wait before this attempt (0 for the first)
 * @param status the HTTP status, or 0 when the attempt got no response (connection failure, timeout)
 * @param code the problem document's {@code code}, or null when there was none
 * @param notes what the client made of it, for humans ("retryable: 503", "final", "connection failure: ...")
 */
public record Attempt(int attempt, long delayMillis, int status, String code, String notes) {
  public Attempt {
    Objects.requireNonNull(notes, "notes");
  }

  /** This line with {@code more} appended to its notes. */
  public Attempt withNote(String more) {
    return new Attempt(attempt, delayMillis, status, code, notes.isEmpty() ? more : notes + "; " + more);
  }
}
