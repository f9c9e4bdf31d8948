package dev.idem.client;

import dev.idem.core.IdemException;
import dev.idem.retry.RetryException;
import java.util.List;
import java.util.Optional;

/**
 * Retries ended without a final answer: attempts exhausted, the deadline (or a {@code Retry-After} hint past it)
 * reached, a {@code Retry-After} longer than the client's maximum ({@link RetryAfterTooLongException}), the retry
 * budget refused, or an intent without a key failed once. Whether the server applied the intent is
 * unknown; a keyed unsafe intent stays in the journal, and {@link IdempotentHttpClient#resumePending()} (or a new
 * {@code send} with the same key) finishes it safely.
 *
 * <p>{@link #getCause()} is the idem-retry exception that says why ({@code RetryExhaustedException},
 * {@code RetryDeadlineExceededException}, {@code RetryBudgetExhaustedException}, the client's
 * {@link RetryAfterTooLongException}, ...) or, for an intent sent once, the
 * I/O failure.
 */
public class IntentPendingException extends IdemException {
  private static final long serialVersionUID = 1L;
  private final String key;
  private final transient Response lastResponse;
  private final transient List<Attempt> attempts;

  public IntentPendingException(
      String client, Intent intent, String key, Response lastResponse, List<Attempt> attempts, Throwable cause) {
    super(client + ": " + intent.method() + " " + intent.uri() + (key != null ? " (key " + key + ")" : " (no key)")
        + " has no final answer after " + attempts.size() + " attempt" + (attempts.size() == 1 ? "" : "s")
        + (lastResponse != null ? ", last HTTP " + lastResponse.status()
            + lastResponse.problemCode().map(c -> " " + c).orElse("") : "")
        + ": " + (cause instanceof RetryException ? cause.getMessage() : String.valueOf(cause))
        + (key != null ? ". It stays pending; resumePending() or a send with the same key finishes it."
            : ". Sent without a key, it is not retried."),
        cause);
    this.key = key;
    this.lastResponse = lastResponse;
    this.attempts = List.copyOf(attempts);
  }

  /** The key every attempt carried, or empty for an intent sent without one. */
  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  /** The last attempt's response, when the last attempt got one (a 503, say). */
  public Optional<Response> lastResponse() {
    return Optional.ofNullable(lastResponse);
  }

  /** The attempt log. */
  public List<Attempt> attempts() {
    return attempts;
  }
}
