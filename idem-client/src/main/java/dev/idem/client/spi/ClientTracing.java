package dev.idem.client.spi;

import dev.idem.client.Attempt;
import java.net.URI;
import java.util.function.BiConsumer;

/**
 * Traces the attempts of an {@link dev.idem.client.IdempotentHttpClient}: told just before each attempt is sent, it
 * may set headers on that attempt (a trace context) and returns the {@link AttemptTrace} that is told how the attempt
 * ended. {@link dev.idem.client.otel.OpenTelemetryTracing} is the built-in one; the default is {@link #NONE}.
 *
 * <p>Both calls for one attempt come on the calling thread, {@link #start} first, then exactly one
 * {@link AttemptTrace#end}, with nothing else of the client's in between but the exchange itself. Implementations
 * must be thread-safe and fast, and must not throw. Nothing handed to them carries a body or a credential.
 */
@FunctionalInterface
public interface ClientTracing {
  /** Traces nothing and sets no header. */
  ClientTracing NONE = (client, method, uri, key, attempt, headers) -> AttemptTrace.NONE;

  /**
   * An attempt is about to be sent.
   *
   * @param client the client's name
   * @param method the request method, such as {@code POST}
   * @param uri the request's URI
   * @param key the intent's idempotency key, or null for a request without one
   * @param attempt 1 for the first attempt
   * @param headers sets a header on this attempt's request, replacing any of the same name
   * @return told how the attempt ended
   */
  AttemptTrace start(String client, String method, URI uri, String key, int attempt,
      BiConsumer<String, String> headers);

  /** What the client made of one attempt. */
  enum AttemptOutcome {
    /** A final answer below 400 that the server did not say it replayed. */
    SUCCESS,
    /** A final answer the server says it replayed from its store ({@code Idempotency-Status: replayed}). */
    REPLAYED,
    /**
     * An answer or a failure the client retries (DESIGN section 5); whether another attempt follows depends on the
     * attempts, the deadline and the budget left.
     */
    RETRYABLE,
    /** The server says the key was used for another request: the call ends with a payload mismatch. */
    PAYLOAD_MISMATCH,
    /** Any other end: a final answer of 400 or more, a failure that is not retried, an unreadable answer. */
    FAILURE
  }

  /** One attempt being traced. */
  @FunctionalInterface
  interface AttemptTrace {
    /** Does nothing. */
    AttemptTrace NONE = (attempt, outcome, failure) -> {};

    /**
     * The attempt ended.
     *
     * @param attempt its line in the attempt log (status 0 when no answer came)
     * @param outcome what the client made of it
     * @param failure the exception that ended the attempt without an answer, or null
     */
    void end(Attempt attempt, AttemptOutcome outcome, Throwable failure);
  }
}
