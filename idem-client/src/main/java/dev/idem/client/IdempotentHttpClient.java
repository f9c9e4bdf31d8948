package dev.idem.client;

import dev.idem.client.internal.ProblemScanner;
import dev.idem.client.spi.AttemptListener;
import dev.idem.client.spi.ClientTracing.AttemptOutcome;
import dev.idem.client.spi.ClientTracing.CallOutcome;
import dev.idem.client.spi.ClientTracing.CallTrace;
import dev.idem.client.spi.ClientTracing;
import dev.idem.client.spi.PendingJournal;
import dev.idem.core.Deadline;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.UuidV7;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.retry.Retry;
import dev.idem.retry.RetryAfter;
import dev.idem.retry.RetryBudget;
import dev.idem.retry.RetryDeadlineExceededException;
import dev.idem.retry.RetryException;
import dev.idem.retry.RetryExhaustedException;
import dev.idem.retry.RetryPolicy;
import dev.idem.retry.spi.RetryListener;
import dev.idem.retry.spi.Sleeper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * An HTTP client that makes unsafe requests safe to retry (docs/architecture.md#retry-rules). Thread-safe; build with
 * {@link #builder()} and share.
 *
 * <p>Per {@link #send(Intent)}:
 *
 * <ul>
 *   <li>an unsafe intent (any method but GET, HEAD, OPTIONS and TRACE) is sent with {@value #IDEMPOTENCY_KEY}: the
 *       caller's key or a fresh UUIDv7, the same on every attempt; safe methods carry none;
 *   <li>a keyed unsafe intent is appended to the {@link PendingJournal} before the first send (without
 *       {@code Authorization}, {@code Cookie}, {@code Proxy-Authorization}: credentials come from
 *       {@link Builder#headers(Supplier)} at send and resume time) and completed on a final answer;
 *   <li>retried: connection failures and timeouts ({@link IOException}, including
 *       {@link java.net.http.HttpTimeoutException}), 408, 429, 500, 502, 503, 504, and 409 with problem code
 *       {@code CONFLICT.idempotency.in_progress}; never another 4xx, never a problem with
 *       {@code "retryable": false} (whatever its status), never an unsafe intent sent
 *       {@link Intent#withoutKey() without a key};
 *   <li>422 (or 409) {@code CONFLICT.idempotency.payload_mismatch} ends with {@link PayloadMismatchException} after
 *       one attempt, and 422 {@code CONFLICT.idempotency.key_expired} (the key's answer is no longer kept) with
 *       {@link KeyExpiredException}; both complete the intent in the journal; 409
 *       {@code CONFLICT.idempotency.outcome_uncertain} (the server will not guess what the first request did) ends with
 *       {@link IntentPendingException} and leaves a keyed intent pending, so that a later resend gets the decided
 *       answer;
 *   <li>delays, {@code Retry-After} (a floor, read against the response's {@code Date}), the deadline and the budget
 *       are idem-retry's: {@link Retry} under the configured {@link RetryPolicy};
 *   <li>a {@code Retry-After} longer than {@link Builder#maxRetryAfter(Duration)} (when not set: the call's deadline,
 *       or without one the larger of 60 s and the policy's backoff cap) ends the call at once, with
 *       {@link IntentPendingException}
 *       whose cause is a {@link RetryAfterTooLongException} naming the header: the client neither waits that long
 *       nor retries sooner than the server asked (a keyed intent stays pending);
 *   <li>every attempt, the first included, carries {@value #ATTEMPT_HEADER}{@code : n} (1-based), and, when there is a
 *       deadline, {@value #REQUEST_TIMEOUT_HEADER}{@code : ms} with the milliseconds left of it, which is also the
 *       transport timeout of that attempt;
 *   <li>a call made while the calling thread has a {@link Deadline#current() current deadline} (a server's
 *       {@code DeadlineFilter} sets one per request) uses the smaller of that deadline and its own (the intent's
 *       timeout, else the policy's), so budgets shrink from service to service; when less than 1 ms of the current
 *       deadline is left, nothing is sent and {@link IntentPendingException} is thrown at once with a
 *       {@link RetryDeadlineExceededException} as its cause (a keyed intent stays pending, as when a deadline runs
 *       out between attempts).
 * </ul>
 *
 * <p>A final answer (any status the rules above do not retry) is returned as a {@link Response}; when retries end
 * without one, {@link IntentPendingException} says why and the intent stays in the journal.
 *
 * <p>What a call does can be watched through {@link Builder#listener} (every attempt's log line),
 * {@link Builder#retryListener} (the retry loop's events, such as retries by cause and budget refusals) and
 * {@link Builder#tracing} (a trace per call, a span per attempt, the trace context on each request).
 */
public final class IdempotentHttpClient {
  /** The request header that carries the key. */
  public static final String IDEMPOTENCY_KEY = IdemHeaders.IDEMPOTENCY_KEY;
  /** The request header that carries the attempt number, 1 for the first attempt. */
  public static final String ATTEMPT_HEADER = IdemHeaders.IDEMPOTENCY_ATTEMPT;
  /** The request header that carries the milliseconds left of the deadline. */
  public static final String REQUEST_TIMEOUT_HEADER = IdemHeaders.REQUEST_TIMEOUT;
  /**
   * Problem code of a request whose key is still in flight: retried after its {@code Retry-After}
   * ({@link ProblemCode#IN_PROGRESS}).
   */
  public static final String IN_PROGRESS = ProblemCode.IN_PROGRESS.code();
  /** Problem code of a key reused with another request: never retried ({@link ProblemCode#PAYLOAD_MISMATCH}). */
  public static final String PAYLOAD_MISMATCH = ProblemCode.PAYLOAD_MISMATCH.code();
  /** The largest answer body read into memory: 16 MiB. A larger one ends the call; nothing is retried. */
  public static final int MAX_RESPONSE_BYTES = 16 << 20;
  /** The smallest default of {@link Builder#maxRetryAfter(Duration)}: the retry policy's, 60 s. */
  public static final Duration DEFAULT_MAX_RETRY_AFTER = RetryPolicy.DEFAULT_MAX_RETRY_AFTER;

  private static final Set<Integer> RETRYABLE_STATUSES = Set.of(408, 429, 500, 502, 503, 504);
  private static final Set<String> SECRET_HEADERS = Set.of("authorization", "cookie", "proxy-authorization");
  private static final System.Logger LOG = System.getLogger(IdempotentHttpClient.class.getName());

  private final String name;
  private final HttpClient http;
  private final RetryPolicy<Outcome> policy;
  private final Supplier<RetryBudget> budgetFactory;
  /** Destinations whose retry budgets are kept; the least recently used one's is dropped past it. */
  static final int MAX_BUDGETS = 1024;
  /** The retry budget per destination, least recently used first (access order), at most {@link #MAX_BUDGETS}. */
  private final Map<String, RetryBudget> budgets = Collections.synchronizedMap(
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, RetryBudget> eldest) {
          return size() > MAX_BUDGETS;
        }
      });
  private final Clock clock;
  private final RandomGenerator random;
  private final Sleeper sleeper;
  private final PendingJournal journal;
  private final AttemptListener listener;
  private final RetryListener retryListener;
  private final ClientTracing tracing;
  private final Supplier<Map<String, String>> headers;
  /** Set by the builder, applied to every call; null when not set. */
  private final Duration maxRetryAfter;

  private IdempotentHttpClient(Builder b) {
    this.name = b.name;
    this.http = b.http != null ? b.http : HttpClient.newHttpClient();
    @SuppressWarnings("unchecked")
    RetryPolicy<Outcome> typed = (RetryPolicy<Outcome>) b.policy;
    this.policy = typed.toBuilder()
        .retryOnResult(o -> o.retryable)
        .abortOnResult(o -> !o.retryable)
        .retryAfter(o -> java.util.Optional.ofNullable(o.retryAfter))
        .abortOn(KeyRefusedException.class, RetryAfterTooLongException.class)
        .build();
    this.budgetFactory = b.budgetFactory;
    this.clock = b.clock;
    this.random = b.random;
    this.sleeper = b.sleeper;
    this.journal = b.journal;
    this.listener = b.listener;
    this.retryListener = b.retryListener;
    this.tracing = b.tracing;
    this.headers = b.headers;
    this.maxRetryAfter = b.maxRetryAfter;
  }

  /** A builder with the defaults: a new {@link HttpClient}, {@link RetryPolicy#ofDefaults()}, no budget, no journal. */
  public static Builder builder() {
    return new Builder();
  }

  /** The name in messages and listener events. */
  public String name() {
    return name;
  }

  /**
   * Sends {@code intent} until it has a final answer or the rules above end it.
   *
   * @return the final answer, with the key and the attempt log
   * @throws PayloadMismatchException when the server says the key was used for another request
   * @throws KeyExpiredException when the server says the key's answer has expired (its effect stands)
   * @throws IntentPendingException when retries end without a final answer
   */
  public Response send(Intent intent) {
    Objects.requireNonNull(intent, "intent");
    String key = keyFor(intent);
    Intent keyed = key != null && intent.key().isEmpty() ? intent.withKey(key) : intent;
    TracedCall traced = new TracedCall(tracing.startCall(name, keyed.method(), keyed.uri(), key));
    Response response;
    try {
      response = sendTraced(keyed, key, traced);
    } catch (Throwable t) {
      traced.failed(t);
      throw t;
    }
    traced.answered(response);
    return response;
  }

  private Response sendTraced(Intent keyed, String key, TracedCall traced) {
    boolean journaled = key != null;
    Deadline current = Deadline.current().orElse(null);
    if (current != null && current.remainingNanos() < 1_000_000L) {
      // Nobody waits for the answer any more and nothing was ever sent: the intent is not journaled, so that a later
      // resumePending() cannot send what the caller has given up on (it may well send a new intent instead).
      throw new IntentPendingException(name, keyed, key, null, List.of(),
          new InheritedDeadlineExceededException(name, current.remainingNanos()));
    }
    if (!journaled) {
      return execute(keyed, key, false, false, traced);
    }
    journal.append(keyed.withoutHeaders(SECRET_HEADERS).withTimeoutCleared());
    try {
      return execute(keyed, key, true, false, traced);
    } catch (IntentPendingException e) {
      if (traced.sent == 0) {
        // The deadline ran out while the intent was being journaled: nothing was sent, and the caller has given up
        // on it (it may send a new intent instead), so resumePending() must not send this one.
        forget(key);
      }
      throw e;
    }
  }

  /**
   * Removes {@code key}'s intent from the journal once its outcome is known. A failure to write that is logged, not
   * thrown: the outcome stands, and an intent left pending is harmless, since resending it with its key gets the
   * server's kept answer.
   */
  private void forget(String key) {
    try {
      journal.complete(key);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, name + ": the intent of key " + key + " has its outcome, but the journal"
          + " could not record that; it stays pending and a resumePending() replays its answer: " + e.getMessage(), e);
    }
  }

  /**
   * Re-sends every intent the journal holds as pending, each with its original key, one after another, and returns
   * what became of each. Intents that end without a final answer stay pending.
   */
  public List<Resumed> resumePending() {
    List<Resumed> results = new ArrayList<>();
    for (Intent intent : journal.pending()) {
      String key = intent.key().orElseThrow(() -> new IllegalStateException(
          name + ": journal returned an intent without a key: " + intent));
      TracedCall traced = new TracedCall(tracing.startCall(name, intent.method(), intent.uri(), key));
      Response response;
      try {
        response = execute(intent, key, true, true, traced);
      } catch (RuntimeException e) {
        traced.failed(e);
        results.add(new Resumed(intent, java.util.Optional.empty(), java.util.Optional.of(e)));
        continue;
      } catch (Throwable t) {
        traced.failed(t);
        throw t;
      }
      traced.answered(response);
      results.add(new Resumed(intent, java.util.Optional.of(response), java.util.Optional.empty()));
    }
    return results;
  }

  /**
   * The retry budget of {@code uri}'s destination (host:port), if budgets are configured and it has been used; the
   * budgets of the {@value #MAX_BUDGETS} destinations used last are kept, an older one starts afresh.
   */
  public java.util.Optional<RetryBudget> retryBudget(URI uri) {
    return java.util.Optional.ofNullable(budgets.get(destination(uri)));
  }

  private String keyFor(Intent intent) {
    if (!intent.isUnsafe() || intent.isWithoutKey()) {
      return null;
    }
    return intent.key().orElseGet(() -> UuidV7.next().toString());
  }

  /**
   * Sends {@code intent} under its retry policy. {@code resumed}: a journaled intent sent again by
   * {@link #resumePending()}, which an earlier process may have sent already, so its first attempt here says it is
   * at least the second ({@code Idempotency-Attempt: 2}): a server that skips its look-up for first attempts must
   * read the record before running the work again.
   */
  private Response execute(Intent intent, String key, boolean journaled, boolean resumed, TracedCall traced) {
    boolean retryable = !intent.isUnsafe() || key != null;
    Duration own = intent.timeout().or(policy::deadline).orElse(null);
    Duration inherited = null;
    Deadline current = Deadline.current().orElse(null);
    if (current != null) {
      long leftNanos = current.remainingNanos();
      if (leftNanos < 1_000_000L) {
        // Nobody waits for the answer any more: nothing is sent (a resumed intent stays pending, as when a deadline
        // runs out between attempts).
        throw new IntentPendingException(name, intent, key, null, List.of(),
            new InheritedDeadlineExceededException(name, leftNanos));
      }
      inherited = Duration.ofMillis(leftNanos / 1_000_000L);
    }
    Duration effective = own == null || (inherited != null && inherited.compareTo(own) < 0) ? inherited : own;
    RetryPolicy<Outcome> callPolicy = policy;
    boolean differs = effective != null && !effective.equals(policy.deadline().orElse(null));
    if (differs || !retryable) {
      RetryPolicy.Builder<Outcome> b = policy.toBuilder();
      if (differs) {
        b.deadline(effective);
      }
      if (!retryable) {
        b.maxAttempts(1);
      }
      callPolicy = b.build();
    }
    long now = clock.millis();
    long deadlineAt = callPolicy.deadline().map(d -> saturatedAdd(now, d.toMillis())).orElse(Long.MAX_VALUE);
    Call call = new Call(intent, key, retryable, deadlineAt, callPolicy, traced, resumed ? 1 : 0);
    if (!retryable) {
      // An unsafe request without a key is sent once, outside the retry loop: no routed policy can repeat it.
      try {
        return call.attempt().response(key, call.attempts);
      } catch (IOException e) {
        throw new IntentPendingException(name, intent, key, null, call.attempts, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IntentPendingException(name, intent, key, null, call.attempts, e);
      }
    }
    Retry<Outcome> retry = Retry.of(callPolicy).withName(name).withClock(clock).withSleeper(sleeper)
        .withListener(retryListener == RetryListener.NO_OP ? call : new ForwardingRetryListener(call, retryListener));
    if (random != null) {
      retry = retry.withRandom(random);
    }
    if (budgetFactory != null) {
      retry = retry.withBudget(budgets.computeIfAbsent(destination(intent.uri()), d -> budgetFactory.get()));
    }
    Outcome outcome;
    try {
      outcome = retry.call(call::attempt);
    } catch (KeyRefusedException e) {
      if (journaled) {
        forget(key);
      }
      throw e;
    } catch (RetryException e) {
      Outcome last = e instanceof RetryExhaustedException x && x.lastResult() instanceof Outcome o ? o : call.last;
      call.noteLast(e.getClass().getSimpleName());
      Response lastResponse = last == null ? null : last.response(key, call.attempts);
      throw new IntentPendingException(name, intent, key, lastResponse, call.attempts, e);
    }
    if (key != null && call.attempts.size() + call.sentBefore > 1
        && ProblemCode.RETRY_BUDGET_EXHAUSTED.is(outcome.code)) {
      // A server shed this retry before looking at its key: an earlier attempt (of this call, or of the process that
      // journaled a resumed intent) may have taken effect, and only a resend with the same key can tell. The outcome
      // is unknown, so the intent stays pending (resumePending()).
      Response refused = outcome.response(key, call.attempts);
      throw new IntentPendingException(name, intent, key, refused, call.attempts,
          new IllegalStateException(name + ": the server's retry budget refused attempt " + call.attempts.size()
              + " before its key was looked at; resend the same intent later"));
    }
    if (key != null && ProblemCode.OUTCOME_UNCERTAIN.is(outcome.code)) {
      // The server could not confirm what the first request with this key did, and will not guess: its reconciler or
      // an operator decides. The intent stays pending; a later resend with the same key gets the decided answer.
      Response uncertain = outcome.response(key, call.attempts);
      throw new IntentPendingException(name, intent, key, uncertain, call.attempts,
          new IllegalStateException(name + ": the server holds the outcome of key '" + key + "' as uncertain until"
              + " its reconciler or an operator decides; resend the same intent later (resumePending())"));
    }
    if (journaled) {
      forget(key);
    }
    return outcome.response(key, call.attempts);
  }

  /** The deadline ran out while an attempt was being prepared: it is not sent, and the retry loop's deadline ends. */
  private static final class DeadlinePassedBeforeSending extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    DeadlinePassedBeforeSending(long remainingMillis) {
      super("the deadline passed before the attempt was sent (" + remainingMillis + " ms left); nothing was sent");
    }
  }

  /**
   * The calling thread's {@link Deadline#current() deadline} had passed before the first attempt. A
   * {@link RetryDeadlineExceededException}, so callers that handle a deadline running out between attempts handle
   * this too.
   */
  private static final class InheritedDeadlineExceededException extends RetryDeadlineExceededException {
    private static final long serialVersionUID = 1L;
    private final String detail;

    InheritedDeadlineExceededException(String client, long leftNanos) {
      super(client, 0, Duration.ZERO, Duration.ZERO, Duration.ZERO, null, null);
      long agoMillis = Math.max(0L, -leftNanos) / 1_000_000L;
      this.detail = client + ": the caller's deadline (Deadline.current() of thread '"
          + Thread.currentThread().getName() + "') "
          + (leftNanos > 0 ? "leaves less than 1 ms" : "passed " + agoMillis + " ms ago")
          + "; nothing was sent, since no one waits for the answer any more";
    }

    @Override
    public String getMessage() {
      return detail;
    }
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  private static String destination(URI uri) {
    int port = uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    return uri.getHost().toLowerCase(Locale.ROOT) + ":" + port;
  }

  /**
   * The trace of one call: starts its attempts, counts those sent, and ends once, however the call ends. A tracing
   * that throws from its end (against its contract) is logged and ignored: the call's answer or exception stands.
   */
  private final class TracedCall {
    private final CallTrace trace;
    private int sent;

    TracedCall(CallTrace trace) {
      this.trace = trace;
    }

    ClientTracing.AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers) {
      sent++;
      return trace.startAttempt(attempt, headers);
    }

    void answered(Response response) {
      CallOutcome outcome = response.isReplayed() ? CallOutcome.REPLAYED
          : response.status() < 400 ? CallOutcome.SUCCESS : CallOutcome.FAILURE;
      end(outcome, response.status(), null);
    }

    void failed(Throwable failure) {
      if (failure instanceof PayloadMismatchException mismatch) {
        end(CallOutcome.PAYLOAD_MISMATCH, mismatch.status(), failure);
      } else if (failure instanceof IntentPendingException pending) {
        end(CallOutcome.PENDING, pending.lastResponse().map(Response::status).orElse(0), failure);
      } else {
        end(CallOutcome.FAILURE, 0, failure);
      }
    }

    private void end(CallOutcome outcome, int status, Throwable failure) {
      try {
        trace.end(outcome, sent, status, failure);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, name + ": tracing " + tracing + " threw at the end of a call; ignored", e);
      }
    }
  }

  /**
   * The retry loop's events, to the call first and then to the application's {@link Builder#retryListener}, whose
   * failures are logged and skipped so that they cannot break the call. {@code onSuccess}, and
   * {@code onRetryScheduled} for a retried answer, hand it the {@link Response}, not the client's internal result.
   */
  private final class ForwardingRetryListener implements RetryListener {
    private final Call call;
    private final RetryListener user;

    ForwardingRetryListener(Call call, RetryListener user) {
      this.call = call;
      this.user = user;
    }

    @Override
    public void onAttempt(String retryName, int attempt) {
      call.onAttempt(retryName, attempt);
      try {
        user.onAttempt(retryName, attempt);
      } catch (RuntimeException e) {
        ignored("onAttempt", e);
      }
    }

    @Override
    public void onHedge(String retryName, int attempt) {
      call.onHedge(retryName, attempt);
      try {
        user.onHedge(retryName, attempt);
      } catch (RuntimeException e) {
        ignored("onHedge", e);
      }
    }

    @Override
    public void onRetryScheduled(String retryName, int attempt, Duration delay, Throwable cause) {
      onRetryScheduled(retryName, attempt, delay, cause, null);
    }

    @Override
    public void onRetryScheduled(String retryName, int attempt, Duration delay, Throwable cause, Object result) {
      call.onRetryScheduled(retryName, attempt, delay, cause);
      try {
        user.onRetryScheduled(retryName, attempt, delay, cause,
            result instanceof Outcome o ? o.response(call.key, call.attempts) : result);
      } catch (RuntimeException e) {
        ignored("onRetryScheduled", e);
      }
    }

    @Override
    public void onSuccess(String retryName, int attempts, Object result) {
      call.onSuccess(retryName, attempts, result);
      try {
        user.onSuccess(retryName, attempts, result instanceof Outcome o ? o.response(call.key, call.attempts) : result);
      } catch (RuntimeException e) {
        ignored("onSuccess", e);
      }
    }

    @Override
    public void onFailure(String retryName, int attempts, Throwable failure) {
      call.onFailure(retryName, attempts, failure);
      try {
        user.onFailure(retryName, attempts, failure);
      } catch (RuntimeException e) {
        ignored("onFailure", e);
      }
    }

    @Override
    public void onBudgetRefused(String retryName, int attempt) {
      call.onBudgetRefused(retryName, attempt);
      try {
        user.onBudgetRefused(retryName, attempt);
      } catch (RuntimeException e) {
        ignored("onBudgetRefused", e);
      }
    }

    @Override
    public void onCircuitOpen(String retryName, int attempt) {
      call.onCircuitOpen(retryName, attempt);
      try {
        user.onCircuitOpen(retryName, attempt);
      } catch (RuntimeException e) {
        ignored("onCircuitOpen", e);
      }
    }

    private void ignored(String event, RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, name + ": retry listener " + user.getClass().getName() + " threw from "
          + event + "; ignored", e);
    }
  }

  /** One attempt's answer as the retry loop sees it. */
  private static final class Outcome {
    final int status;
    final HttpHeaders headers;
    final byte[] body;
    final String code;
    final boolean retryable;
    final Duration retryAfter;

    Outcome(int status, HttpHeaders headers, byte[] body, String code, boolean retryable, Duration retryAfter) {
      this.status = status;
      this.headers = headers;
      this.body = body;
      this.code = code;
      this.retryable = retryable;
      this.retryAfter = retryAfter;
    }

    Response response(String key, List<Attempt> attempts) {
      return new Response(status, headers, body, key, code, attempts);
    }
  }

  /** The state of one {@link #send}: attempt counter, the wait before the next attempt, the attempt log. */
  private final class Call implements RetryListener {
    final Intent intent;
    final String key;
    final boolean retryable;
    final long deadlineAt;
    final RetryPolicy<Outcome> callPolicy;
    final TracedCall traced;
    final List<Attempt> attempts = new ArrayList<>();
    int count;
    long nextDelayMillis;
    Outcome last;
    /** The trace of the attempt under way, until it ends. */
    ClientTracing.AttemptTrace trace;
    /** Attempts an earlier send may have made (1 for a resumed intent): added to the attempt header's number. */
    final int sentBefore;

    Call(Intent intent, String key, boolean retryable, long deadlineAt, RetryPolicy<Outcome> callPolicy,
        TracedCall traced, int sentBefore) {
      this.sentBefore = sentBefore;
      this.intent = intent;
      this.key = key;
      this.retryable = retryable;
      this.deadlineAt = deadlineAt;
      this.callPolicy = callPolicy;
      this.traced = traced;
    }

    @Override
    public void onRetryScheduled(String retryName, int attempt, Duration delay, Throwable cause) {
      nextDelayMillis = delay.toMillis();
    }

    @Override
    public void onBudgetRefused(String retryName, int attempt) {
      noteLast("retry budget refused");
    }

    void noteLast(String note) {
      if (!attempts.isEmpty()) {
        int i = attempts.size() - 1;
        attempts.set(i, attempts.get(i).withNote(note));
      }
    }

    Outcome attempt() throws IOException, InterruptedException {
      int n = ++count;
      long delay = nextDelayMillis;
      nextDelayMillis = 0;
      last = null;
      try {
        return exchange(n, delay);
      } catch (Throwable t) {
        // an end that wrote no line to the attempt log (an interrupt, a bug): the trace ends all the same
        endTrace(new Attempt(n, delay, 0, null, "ended by " + t.getClass().getName()), AttemptOutcome.FAILURE, t);
        throw t;
      }
    }

    private Outcome exchange(int n, long delay) throws IOException, InterruptedException {
      HttpRequest request = request(n);
      HttpResponse<java.io.InputStream> r;
      byte[] body;
      try {
        r = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (java.io.InputStream in = r.body()) {
          body = in == null ? new byte[0] : in.readNBytes(MAX_RESPONSE_BYTES + 1);
        }
      } catch (IOException e) {
        log(new Attempt(n, delay, 0, null, (retryable ? "retryable: " : "final, no key: ") + e),
            retryable ? AttemptOutcome.RETRYABLE : AttemptOutcome.FAILURE, e);
        throw e;
      }
      int status = r.statusCode();
      if (body.length > MAX_RESPONSE_BYTES) {
        log(new Attempt(n, delay, status, null, "final: body larger than " + MAX_RESPONSE_BYTES + " bytes"),
            AttemptOutcome.FAILURE, null);
        throw new IllegalStateException(name + ": the answer to " + intent.method() + " " + intent.uri()
            + " is larger than " + MAX_RESPONSE_BYTES + " bytes; it was not read (the intent stays pending)");
      }
      String contentType = r.headers().firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
      Map<String, Object> problem =
          contentType.contains("json") && status >= 400 ? ProblemScanner.scan(body) : Map.of();
      String code = problem.get("code") instanceof String s ? s : null;
      Boolean serverRetryable = problem.get("retryable") instanceof Boolean flag ? flag : null;
      if (ProblemCode.PAYLOAD_MISMATCH.is(code) && (status == 422 || status == 409)) {
        log(new Attempt(n, delay, status, code, "final: payload mismatch"), AttemptOutcome.PAYLOAD_MISMATCH, null);
        String detail = problem.get("detail") instanceof String s ? s : null;
        throw new PayloadMismatchException(name, key, status, detail, attempts);
      }
      if (ProblemCode.KEY_EXPIRED.is(code) && status == 422) {
        log(new Attempt(n, delay, status, code, "final: key expired"), AttemptOutcome.FAILURE, null);
        String detail = problem.get("detail") instanceof String s ? s : null;
        String expiredAt = problem.get("expired_at") instanceof String s ? s : null;
        throw new KeyExpiredException(name, key, status, detail, expiredAt, attempts);
      }
      boolean retry;
      String note;
      if (Boolean.FALSE.equals(serverRetryable)) {
        retry = false;
        note = "final: server says retryable=false";
      } else if (status == 409) {
        retry = ProblemCode.IN_PROGRESS.is(code);
        note = retry ? "retryable: in progress" : "final: 409";
      } else {
        retry = RETRYABLE_STATUSES.contains(status);
        note = retry ? "retryable: " + status : "final: " + status;
      }
      if (retry && !retryable) {
        retry = false;
        note = "final: unsafe request without a key is not retried";
      }
      Duration hint = null;
      if (retry) {
        String header = r.headers().firstValue(IdemHeaders.RETRY_AFTER).orElse(null);
        hint = RetryAfter.parse(header, r.headers().firstValue("Date").orElse(null), clock).orElse(null);
        if (hint != null) {
          note += ", Retry-After " + hint.toMillis() + " ms";
          // the call's policy says how long a hint may be (none with a deadline, which bounds it), unless this
          // client was given a maximum of its own; checked here to name the header and status in the exception
          Duration max = maxRetryAfter != null ? maxRetryAfter : callPolicy.maxRetryAfter().orElse(null);
          if (max != null && hint.compareTo(max) > 0) {
            // The server says it will not be ready sooner: waiting that long could hold the caller for a day, and
            // retrying sooner than asked is a retry storm. The call ends; a keyed intent stays pending.
            log(new Attempt(n, delay, status, code, note + ", over maxRetryAfter " + max.toMillis()
                + " ms: given up"), AttemptOutcome.RETRYABLE, null);
            last = new Outcome(status, r.headers(), body, code, true, hint);
            throw new RetryAfterTooLongException(name, n, status, header, hint, max);
          }
        }
      }
      AttemptOutcome traced = retry ? AttemptOutcome.RETRYABLE
          : Response.replayed(r.headers()) ? AttemptOutcome.REPLAYED
          : status < 400 ? AttemptOutcome.SUCCESS : AttemptOutcome.FAILURE;
      log(new Attempt(n, delay, status, code, note), traced, null);
      last = new Outcome(status, r.headers(), body, code, retry, hint);
      return last;
    }

    private HttpRequest request(int n) throws IOException {
      byte[] body = intent.bodyUnsafe();
      HttpRequest.BodyPublisher publisher = body.length == 0 && !intent.isUnsafe()
          ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body);
      HttpRequest.Builder b = HttpRequest.newBuilder(intent.uri()).method(intent.method(), publisher);
      Map<String, String> configured = headers.get();
      if (configured != null) {
        configured.forEach(b::header);
      }
      for (Map.Entry<String, String> h : intent.headers()) {
        b.header(h.getKey(), h.getValue());
      }
      if (key != null) {
        // as a Structured Field string when the key holds a character that cannot travel bare
        b.header(IDEMPOTENCY_KEY, IdempotencyKey.of(key).headerValue());
      }
      b.header(ATTEMPT_HEADER, Integer.toString(n + sentBefore));
      Duration attemptTimeout = callPolicy.attemptTimeout(n);
      if (deadlineAt != Long.MAX_VALUE) {
        long remaining = deadlineAt - clock.millis();
        Deadline current = Deadline.current().orElse(null);
        if (current != null) {
          // the monotonic deadline wins over the wall clock, which may have stepped since the call began
          remaining = Math.min(remaining, current.remainingNanos() / 1_000_000L);
        }
        if (remaining < 1) {
          throw new DeadlinePassedBeforeSending(remaining);
        }
        b.header(REQUEST_TIMEOUT_HEADER, Long.toString(remaining));
        Duration left = Duration.ofMillis(remaining);
        attemptTimeout = attemptTimeout.isZero() || left.compareTo(attemptTimeout) < 0 ? left : attemptTimeout;
      }
      if (!attemptTimeout.isZero()) {
        b.timeout(attemptTimeout);
      }
      // last, so that nothing is traced for an attempt that is not sent
      trace = traced.startAttempt(n, b::setHeader);
      return b.build();
    }

    private void log(Attempt a, AttemptOutcome outcome, Throwable failure) {
      attempts.add(a);
      listener.onAttempt(name, key, a);
      endTrace(a, outcome, failure);
    }

    private void endTrace(Attempt a, AttemptOutcome outcome, Throwable failure) {
      ClientTracing.AttemptTrace t = trace;
      if (t != null) {
        trace = null;
        t.end(a, outcome, failure);
      }
    }
  }

  /** Mutable, not thread-safe. Setters validate at once. */
  public static final class Builder {
    private String name = "idem-client";
    private HttpClient http;
    private RetryPolicy<?> policy = RetryPolicy.ofDefaults();
    private Supplier<RetryBudget> budgetFactory;
    private Clock clock = Clock.systemUTC();
    private RandomGenerator random;
    private Sleeper sleeper = Sleeper.THREAD_SLEEP;
    private PendingJournal journal = PendingJournal.NONE;
    private AttemptListener listener = AttemptListener.NO_OP;
    private RetryListener retryListener = RetryListener.NO_OP;
    private ClientTracing tracing = ClientTracing.NONE;
    private Supplier<Map<String, String>> headers = Map::of;
    private Duration maxRetryAfter;

    private Builder() {}

    /** The name in messages and events. Default {@code idem-client}. */
    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /** The transport. Default {@link HttpClient#newHttpClient()}. */
    public Builder httpClient(HttpClient http) {
      this.http = Objects.requireNonNull(http, "httpClient");
      return this;
    }

    /**
     * Attempts, backoff, deadline and attempt timeout, and the classification of exceptions. Its result rules and
     * {@code Retry-After} extraction are replaced by this client's (the status table above). Default
     * {@link RetryPolicy#ofDefaults()}: 5 attempts, 100 ms to 10 s full jitter, 30 s deadline.
     */
    public Builder policy(RetryPolicy<?> policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** One budget per destination (host:port), made by {@code factory} on first use. None by default. */
    public Builder budgetPerDestination(Supplier<RetryBudget> factory) {
      this.budgetFactory = Objects.requireNonNull(factory, "budgetPerDestination");
      return this;
    }

    /** Time for deadlines and HTTP-dates. Default the system clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Randomness for jitter; must be thread-safe if the client is shared. Default {@code ThreadLocalRandom}. */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /** How to wait between attempts. Default {@link Sleeper#THREAD_SLEEP}. */
    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /** Where pending intents are kept. Default {@link PendingJournal#NONE}. */
    public Builder journal(PendingJournal journal) {
      this.journal = Objects.requireNonNull(journal, "journal");
      return this;
    }

    /** Told about every attempt. */
    public Builder listener(AttemptListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Told about the retry loop of every call, as well as the client, which uses the same events for its attempt
     * log: for example the starter's {@code RetryMeters}, for the {@code idem.retry.*} meters (attempts, retries by
     * cause, budget refusals, outcomes). Events name the retry after this client ({@link #name}). {@code onSuccess}
     * comes when the loop ends with an answer it does not retry, and its result is that {@link Response} (a final
     * 4xx included; and a retry that a server's retry budget shed, which {@code send} then throws as
     * {@link IntentPendingException}); a retry of an answer (a 503, say) comes to
     * {@link RetryListener#onRetryScheduled(String, int, Duration, Throwable, Object)} with a null cause and that
     * {@link Response}; {@code onFailure} gets what ended the loop: an idem-retry exception, which
     * {@code send} throws as the cause of an {@link IntentPendingException}, or the {@link PayloadMismatchException}
     * itself. An unsafe intent sent without a key is sent once outside the loop and makes no event, nor does a call
     * that the caller's deadline ended before it began; the client has no circuit breaker and no hedging,
     * so {@code onCircuitOpen} and {@code onHedge} never come. A listener that throws is logged (at WARNING, logger
     * {@code dev.idem.client.IdempotentHttpClient}) and skipped; the call goes on. Default {@link RetryListener#NO_OP}.
     */
    public Builder retryListener(RetryListener retryListener) {
      this.retryListener = Objects.requireNonNull(retryListener, "retryListener");
      return this;
    }

    /**
     * Traces every call and its attempts and may add a trace context to each attempt's headers, for example
     * {@code tracing(OpenTelemetryTracing.of(openTelemetry))} ({@link dev.idem.client.otel.OpenTelemetryTracing}, which
     * needs {@code io.opentelemetry:opentelemetry-api} on the class path). Default {@link ClientTracing#NONE}.
     */
    public Builder tracing(ClientTracing tracing) {
      this.tracing = Objects.requireNonNull(tracing, "tracing");
      return this;
    }

    /**
     * Headers added to every attempt, read again for each one: the place for credentials, which the journal never
     * stores, so that resumed intents get the credentials current at resume time.
     */
    public Builder headers(Supplier<Map<String, String>> headers) {
      this.headers = Objects.requireNonNull(headers, "headers");
      return this;
    }

    /**
     * The longest {@code Retry-After} the client waits for. An answer asking for longer ends the call at once, before
     * any wait, with {@link IntentPendingException} whose cause is a {@link RetryAfterTooLongException} naming the
     * server's header: the server said it will not be ready sooner, so the client neither waits that long (without a
     * deadline, {@code Retry-After: 86400} would hold the caller for a day) nor retries sooner than asked. A keyed
     * intent stays pending, for {@link IdempotentHttpClient#resumePending()} later. Once set it applies with or
     * without a deadline; a shorter hint that lands past the deadline still ends the call with
     * {@link RetryDeadlineExceededException}. When not set, the call's policy decides
     * ({@link RetryPolicy#maxRetryAfter()}): a call with a deadline waits for any hint that fits in it, and a call
     * without one for at most the larger of {@link IdempotentHttpClient#DEFAULT_MAX_RETRY_AFTER} (60 s) and the
     * policy's backoff cap, unless the policy sets its own maximum. Set here, it overrides the policy's.
     *
     * @throws IllegalArgumentException unless {@code max} is positive and at most a day
     */
    public Builder maxRetryAfter(Duration max) {
      Objects.requireNonNull(max, "maxRetryAfter");
      if (max.isNegative() || max.isZero() || max.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException("maxRetryAfter must be > 0 and at most a day, was " + max);
      }
      this.maxRetryAfter = max;
      return this;
    }

    /** The client, with this builder's settings. */
    public IdempotentHttpClient build() {
      return new IdempotentHttpClient(this);
    }
  }
}
