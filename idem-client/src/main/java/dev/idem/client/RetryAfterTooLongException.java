package dev.idem.client;

import dev.idem.retry.RetryException;
import java.time.Duration;

/**
 * A server asked for a wait ({@code Retry-After}) longer than the client's
 * {@link IdempotentHttpClient.Builder#maxRetryAfter(Duration) maxRetryAfter}: the client gave up at once instead of
 * waiting that long or retrying sooner than the server asked. {@link IdempotentHttpClient#send} throws it as the cause
 * of an {@link IntentPendingException}; a keyed intent stays pending, to be resent later with the same key.
 */
public final class RetryAfterTooLongException extends RetryException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String header;
  private final Duration retryAfter;
  private final Duration max;

  /**
   * @param client the client's name
   * @param attempts the attempts made, the one answered with {@code header} included
   * @param status the status of that answer
   * @param header the {@code Retry-After} header as the server sent it
   * @param retryAfter the wait it asks for
   * @param max the longest wait the client accepts
   */
  public RetryAfterTooLongException(
      String client, int attempts, int status, String header, Duration retryAfter, Duration max) {
    super(client + ": attempt " + attempts + " got HTTP " + status + " with Retry-After: " + header + ", a wait of "
        + retryAfter.toMillis() + " ms, longer than maxRetryAfter (" + max.toMillis() + " ms); given up without"
        + " waiting, since the server says it will not be ready sooner", attempts, null);
    this.status = status;
    this.header = header;
    this.retryAfter = retryAfter;
    this.max = max;
  }

  /** The status of the answer that carried the header. */
  public int status() {
    return status;
  }

  /** The {@code Retry-After} header as the server sent it (delay-seconds or an HTTP-date). */
  public String header() {
    return header;
  }

  /** The wait the server asked for, as the client read it. */
  public Duration retryAfter() {
    return retryAfter;
  }

  /** The longest wait the client accepts ({@link IdempotentHttpClient.Builder#maxRetryAfter(Duration)}). */
  public Duration max() {
    return max;
  }
}
