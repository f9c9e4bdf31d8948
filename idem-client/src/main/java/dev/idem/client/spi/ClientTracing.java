package dev.idem.client.spi;

import dev.idem.client.Attempt;
import java.net.URI;
import java.util.function.BiConsumer;

/**
 * Traces the calls of an {@link dev.idem.client.IdempotentHttpClient} and their attempts. A call is one
 * {@code send}, or one intent of {@code resumePending()}: once the key is known, the client opens its
 * {@link CallTrace} with {@link #startCall} (before the journal write and the first attempt), starts every attempt with
 * {@link CallTrace#startAttempt}, just before the attempt is sent (it may set headers on that attempt: a trace
 * context), and ends it once with {@link CallTrace#end}, however the call ends (an answer, an exception, an
 * interrupt). {@link dev.idem.client.otel.OpenTelemetryTracing} is the built-in implementation; the default is
 * {@link #NONE}.
 *
 * <p>An implementation that traces attempts only implements {@link #start}: the default {@link #startCall} starts
 * every attempt of the call with it and traces nothing for the call itself.
 *
 * <p>The methods for one call are invoked on the calling thread, and nest: {@link #startCall}, then for each attempt
 * sent {@link CallTrace#startAttempt} and exactly one {@link AttemptTrace#end} (in between only the exchange, the
 * reading of the answer and the {@link AttemptListener} told of the attempt), and last {@link CallTrace#end}.
 * Implementations must be thread-safe and fast, and must not throw.
 *
 * <p>What implementations are handed: the client's name, the request method, the request {@link URI} as the
 * application gave it, the idempotency key, attempt numbers, statuses, the attempt log lines, outcomes, the exceptions
 * that ended an attempt or a call, and a setter for request headers. No body, and no header value but the key, is
 * handed to them. The URI may carry credentials or secrets of its own, in its user info ({@code user:password@}) or
 * its query string ({@code ?token=...}); implementations must not record either: {@code OpenTelemetryTracing} records
 * only its host and port. Attempt log notes and exception messages may quote the URI too, so record an exception's
 * class, not its message.
 */
@FunctionalInterface
public interface ClientTracing {
  /** Traces nothing and sets no header. */
  ClientTracing NONE = new ClientTracing() {
    @Override
    public AttemptTrace start(String client, String method, URI uri, String key, int attempt,
        BiConsumer<String, String> headers) {
      return AttemptTrace.NONE;
    }

    @Override
    public CallTrace startCall(String client, String method, URI uri, String key) {
      return CallTrace.NONE;
    }

    @Override
    public String toString() {
      return "ClientTracing.NONE";
    }
  };

  /**
   * A call begins: one {@code send}, or one intent of {@code resumePending()}. The default traces nothing for the call
   * and starts each of its attempts with {@link #start}.
   *
   * @param client the client's name
   * @param method the request method, such as {@code POST}
   * @param uri the request's URI, which may carry user info and a query string that must not be recorded
   * @param key the intent's idempotency key, or null for a request without one
   * @return starts the call's attempts and is told how the call ended
   */
  default CallTrace startCall(String client, String method, URI uri, String key) {
    return new CallTrace() {
      @Override
      public AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers) {
        return start(client, method, uri, key, attempt, headers);
      }

      @Override
      public void end(CallOutcome outcome, int attempts, int status, Throwable failure) {}
    };
  }

  /**
   * An attempt is about to be sent. The client calls it only through the default {@link #startCall}; an
   * implementation that overrides {@code startCall} starts attempts in its {@link CallTrace} and may delegate here.
   *
   * @param client the client's name
   * @param method the request method, such as {@code POST}
   * @param uri the request's URI, which may carry user info and a query string that must not be recorded
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
     * An answer or failure the client retries (docs/architecture.md#retry-rules); if another follows depends on the
     * attempts, the deadline and the budget left.
     */
    RETRYABLE,
    /** The server says the key was used for another request: the call ends with a payload mismatch. */
    PAYLOAD_MISMATCH,
    /** Any other end: a final answer of 400 or more, a failure that is not retried, an unreadable answer. */
    FAILURE
  }

  /** How a whole call ended. */
  enum CallOutcome {
    /** A final answer below 400 that the server did not say it replayed. */
    SUCCESS,
    /** A final answer the server says it replayed from its store ({@code Idempotency-Status: replayed}). */
    REPLAYED,
    /** A {@code PayloadMismatchException}: the server says the key was used for another request. */
    PAYLOAD_MISMATCH,
    /**
     * An {@code IntentPendingException}: no final answer (attempts, deadline or budget ran out, an interrupt, a
     * request without a key failed once, a server's retry budget shed a retry); a keyed intent stays in the journal.
     */
    PENDING,
    /** Any other end: a final answer of 400 or more, or another exception (an unreadable answer, a journal error). */
    FAILURE
  }

  /** One call being traced. */
  interface CallTrace {
    /** Traces nothing and sets no header. */
    CallTrace NONE = new CallTrace() {
      @Override
      public AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers) {
        return AttemptTrace.NONE;
      }

      @Override
      public void end(CallOutcome outcome, int attempts, int status, Throwable failure) {}
    };

    /**
     * An attempt of this call is about to be sent.
     *
     * @param attempt 1 for the first attempt
     * @param headers sets a header on this attempt's request, replacing any of the same name
     * @return told how the attempt ended
     */
    AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers);

    /**
     * The call ended; called once, after the last attempt's {@link AttemptTrace#end}.
     *
     * @param outcome how it ended
     * @param attempts the attempts sent, 0 when nothing was sent (the caller's deadline had passed, say)
     * @param status the status of the answer the call ended with (for {@link CallOutcome#PENDING}, the last answer, a
     *     503 say), or 0 when it ended without one
     * @param failure the exception the caller receives, or null when the call returned an answer
     */
    void end(CallOutcome outcome, int attempts, int status, Throwable failure);
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
