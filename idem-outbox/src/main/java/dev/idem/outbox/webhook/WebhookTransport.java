package dev.idem.outbox.webhook;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import dev.idem.retry.RetryAfter;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Delivers outbox events as Standard Webhooks: an HTTP POST of the payload to the endpoint named by the destination's
 * detail ({@code webhook:<endpoint id>}), with {@code webhook-id} (the event id, the same on every attempt),
 * {@code webhook-timestamp} and {@code webhook-signature}.
 *
 * <ul>
 *   <li>Only a 2xx answer counts as delivered.</li>
 *   <li>410 Gone disables the endpoint and kills the event; events to a disabled or unknown endpoint die at once.</li>
 *   <li>429 and 503 retry no sooner than their {@code Retry-After}; other answers and network errors retry with the
 *       relay's backoff.</li>
 *   <li>Each request times out after 15 s unless configured, the answer's body included; a batch is sent
 *       concurrently, each request with the client's blocking {@code send} on a thread of the transport's own pool
 *       (threads are reused, not started per request: the JDK's {@code sendAsync} completes every exchange on a new
 *       thread on hosts with fewer than three processors, where the common pool has one worker). At most
 *       {@link Builder#maxConcurrentRequests} requests (default 256) are in flight at once, across the relay's
 *       workers; the others wait for a thread within the same deadline.</li>
 *   <li>A host written as an ambiguous numeric form ({@code 0177.0.0.1}, {@code 0x7f000001}, {@code 127.1}; see
 *       {@link #isAmbiguousHost}) is refused before any look-up, always.</li>
 *   <li>Endpoints that resolve to internal or special-purpose addresses (loopback, private, link-local such as cloud
 *       metadata, documentation, benchmarking, reserved: see {@link #specialPurposeRange}) are refused unless
 *       {@link Builder#allowPrivateAddresses} is on.</li>
 * </ul>
 */
public final class WebhookTransport implements OutboxTransport {
  private static final Set<String> RESERVED = Set.of("webhook-id", "webhook-timestamp", "webhook-signature",
      "content-type", "content-length", "host", "user-agent", "connection", "transfer-encoding", "expect", "upgrade");
  private static final String CLOSED = "the webhook transport is closed";
  /** Address checks waiting for a resolver thread, across batches, beyond which a check is refused at once. */
  static final int RESOLVER_QUEUE = 1024;

  private final WebhookEndpoints endpoints;
  private final HttpClient client;
  private final Duration timeout;
  private final Clock clock;
  private final String userAgent;
  private final boolean allowPrivateAddresses;
  private final int maxConcurrentRequests;
  private final Function<String, DeliveryResult> addressCheck;
  private ThreadPoolExecutor resolver;
  private ThreadPoolExecutor senders;
  private boolean closed;

  private WebhookTransport(Builder b) {
    this.endpoints = b.endpoints;
    this.timeout = b.timeout;
    this.clock = b.clock;
    this.userAgent = b.userAgent;
    this.allowPrivateAddresses = b.allowPrivateAddresses;
    this.maxConcurrentRequests = b.maxConcurrentRequests;
    this.addressCheck = b.addressCheck;
    this.client = b.client != null ? b.client : HttpClient.newBuilder().connectTimeout(b.timeout)
        .followRedirects(HttpClient.Redirect.NEVER).build();
  }

  public static Builder builder(WebhookEndpoints endpoints) {
    return new Builder(endpoints);
  }

  @Override
  public DeliveryResult send(OutboxMessage message) throws InterruptedException {
    return sendAll(List.of(message)).get(0);
  }

  /**
   * Sends the batch concurrently and waits for every answer, the body included, at most the timeout (plus a second
   * of slack) in all, counted from the start: endpoint look-ups (once per endpoint and batch), address checks (once
   * per host and batch, off the calling thread) and the requests themselves. A destination that stalls, in its DNS or
   * in the middle of its answer, gets a retry, never a stuck relay. A message timed out is never sent afterwards: a
   * late address check or a late sender thread drops it, and checks still pending are cancelled.
   */
  @Override
  public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    if (isClosed()) {
      return messages.stream().map(m -> DeliveryResult.retry(CLOSED, null)).toList();
    }
    long deadline = System.nanoTime() + timeout.toNanos() + TimeUnit.SECONDS.toNanos(1);
    Map<String, Optional<WebhookEndpoint>> found = new HashMap<>();
    Map<String, Check> checks = new HashMap<>();
    List<CompletableFuture<DeliveryResult>> futures = new ArrayList<>(messages.size());
    List<Attempt> attempts = new ArrayList<>(messages.size());
    for (OutboxMessage m : messages) {
      Attempt attempt = new Attempt(deadline);
      attempts.add(attempt);
      futures.add(dispatch(m, found, checks, attempt));
    }
    List<DeliveryResult> results = new ArrayList<>(messages.size());
    for (int i = 0; i < futures.size(); i++) {
      DeliveryResult r;
      try {
        r = futures.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        attempts.get(i).abandon();
        r = DeliveryResult.retry("timed out after " + timeout.toMillis() + " ms", null);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        attempts.get(i).abandon();
        r = DeliveryResult.retry("interrupted", null);
      } catch (ExecutionException e) {
        r = failure(e.getCause());
      }
      results.add(r);
    }
    // a check still running or waiting serves only messages given up on: it must not lead to a request
    boolean cancelled = false;
    for (Check c : checks.values()) {
      cancelled |= c.cancel();
    }
    if (cancelled) {
      purgeResolver(); // cancelled checks leave the resolver's bounded queue now, not when a thread takes them
    }
    return results;
  }

  /** An address check shared by the batch's messages to one host, and its task on the resolver. */
  private record Check(CompletableFuture<DeliveryResult> result, Future<?> task) {
    boolean cancel() {
      if (result.isDone()) {
        return false;
      }
      result.cancel(false); // its continuations never run
      task.cancel(true);
      return true;
    }
  }

  /**
   * One message's request: once {@code sendAll} has given up on it (its deadline passed, or it was interrupted), it
   * is never submitted, and a submitted exchange is cancelled. Submitting and abandoning hold the same lock, so
   * neither a late address check nor a late thread sends a message whose failure the relay has already recorded.
   */
  private static final class Attempt {
    private final long deadline;
    private boolean abandoned;
    private Future<?> exchange;

    Attempt(long deadline) {
      this.deadline = deadline;
    }

    /** Submits the exchange unless given up on; false when it was not submitted. */
    synchronized boolean start(ExecutorService senders, Runnable exchange) {
      if (abandoned || System.nanoTime() - deadline >= 0) {
        abandoned = true;
        return false;
      }
      this.exchange = senders.submit(exchange);
      return true;
    }

    /** Whether the request may still go out: checked again by the sender thread, right before it sends. */
    synchronized boolean live() {
      return !abandoned && System.nanoTime() - deadline < 0;
    }

    synchronized void abandon() {
      abandoned = true;
      if (exchange != null) {
        exchange.cancel(true); // interrupts the blocking send, which aborts the HTTP exchange
      }
    }
  }

  private CompletableFuture<DeliveryResult> dispatch(OutboxMessage m, Map<String, Optional<WebhookEndpoint>> found,
      Map<String, Check> checks, Attempt attempt) {
    String endpointId = m.destinationDetail();
    Optional<WebhookEndpoint> endpoint;
    try {
      endpoint = endpointId.isEmpty() ? Optional.empty() : found.computeIfAbsent(endpointId, endpoints::find);
    } catch (DecryptionException e) {
      // the endpoint's stored secret does not open (tampered with, unknown key): no retry signs this message
      return done(DeliveryResult.permanent("the secret of webhook endpoint '" + endpointId + "' cannot be opened ("
          + e.reason() + (e.keyId() == null ? "" : ", key '" + e.keyId() + "'") + "): " + e.getMessage(), null));
    } catch (RuntimeException e) {
      // the look-up failed (the database blipped): this message only is retried
      return done(DeliveryResult.retry(OutboxTransport.describe(e), null));
    }
    if (endpoint.isEmpty()) {
      return done(DeliveryResult.permanent("no webhook endpoint '" + endpointId + "'", null));
    }
    if (!endpoint.get().enabled()) {
      return done(DeliveryResult.permanent("webhook endpoint '" + endpointId + "' is disabled", null));
    }
    String host = endpoint.get().url().getHost();
    if (WebhookAddresses.isAmbiguous(host)) {
      return done(DeliveryResult.permanent("webhook host " + host + " " + WebhookAddresses.AMBIGUOUS, null));
    }
    HttpRequest request;
    try {
      request = request(m, endpoint.get());
    } catch (IllegalArgumentException e) {
      // no retry makes an invalid request valid
      return done(DeliveryResult.permanent("the request cannot be built: " + e.getMessage(), null));
    }
    CompletableFuture<DeliveryResult> check;
    if (allowPrivateAddresses && addressCheck == null) {
      check = done(null);
    } else {
      try {
        check = checks.computeIfAbsent(host, this::check).result();
      } catch (RejectedExecutionException e) {
        return done(DeliveryResult.retry(isClosed() ? CLOSED : e.getMessage(), null));
      }
    }
    return check.thenCompose(refused -> {
      if (refused != null) {
        return done(refused);
      }
      CompletableFuture<DeliveryResult> result = new CompletableFuture<>();
      try {
        boolean started = attempt.start(senders(), () -> {
          if (!attempt.live()) {
            // waited for a sender thread past the deadline: sendAll has recorded it as timed out
            result.complete(DeliveryResult.retry("timed out after " + timeout.toMillis() + " ms", null));
            return;
          }
          try {
            HttpResponse<Void> response = client.send(request, HttpResponse.BodyHandlers.discarding());
            Thread.interrupted(); // an interrupt that came after the answer must not fail the endpoint's update
            result.complete(classify(m, response));
          } catch (InterruptedException e) {
            result.complete(DeliveryResult.retry("interrupted", null)); // the batch's deadline passed, or close()
          } catch (IOException | RuntimeException e) {
            result.complete(failure(e));
          } catch (Error e) {
            result.completeExceptionally(e);
            throw e;
          }
        });
        if (!started) {
          result.complete(DeliveryResult.retry("timed out after " + timeout.toMillis() + " ms", null));
        }
      } catch (RejectedExecutionException e) {
        result.complete(DeliveryResult.retry(CLOSED, null));
      }
      return result;
    });
  }

  private static CompletableFuture<DeliveryResult> done(DeliveryResult r) {
    return CompletableFuture.completedFuture(r);
  }

  private HttpRequest request(OutboxMessage m, WebhookEndpoint endpoint) {
    byte[] body = m.payload().getBytes(StandardCharsets.UTF_8);
    long timestamp = clock.millis() / 1000;
    String id = m.id().toString();
    HttpRequest.Builder request = HttpRequest.newBuilder(endpoint.url())
        .timeout(timeout)
        .header("content-type", "application/json")
        .header("user-agent", userAgent)
        .header("webhook-id", id)
        .header("webhook-timestamp", Long.toString(timestamp))
        .header("webhook-signature", WebhookSigner.of(endpoint.secrets()).sign(id, timestamp, body))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    m.headers().forEach((k, v) -> {
      if (!RESERVED.contains(k.toLowerCase(Locale.ROOT))) {
        request.header(k, v);
      }
    });
    return request.build();
  }

  /**
   * Starts the address check of {@code host} on the resolver.
   *
   * @throws RejectedExecutionException once the transport is closed, or when {@link #RESOLVER_QUEUE} checks wait
   */
  private Check check(String host) {
    CompletableFuture<DeliveryResult> result = new CompletableFuture<>();
    Future<?> task = resolver().submit(() -> {
      try {
        result.complete(addressCheck != null ? addressCheck.apply(host) : checkAddress(host));
      } catch (RuntimeException e) {
        result.complete(DeliveryResult.retry("checking the address of " + host + " failed: "
            + OutboxTransport.describe(e), null));
      } catch (Error e) {
        result.completeExceptionally(e);
        throw e;
      }
    });
    return new Check(result, task);
  }

  private synchronized void purgeResolver() {
    if (resolver != null) {
      resolver.purge();
    }
  }

  /**
   * The threads that resolve endpoint hosts, so that a slow DNS answer counts against the batch's deadline: four,
   * with at most {@link #RESOLVER_QUEUE} checks waiting; beyond, a check is refused (the message is retried).
   */
  private synchronized ThreadPoolExecutor resolver() {
    checkOpen();
    if (resolver == null) {
      AtomicInteger n = new AtomicInteger();
      resolver = new ThreadPoolExecutor(4, 4, 0, TimeUnit.MILLISECONDS,
          new ArrayBlockingQueue<>(RESOLVER_QUEUE), r -> {
            Thread t = new Thread(r, "idem-webhook-resolver-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
          }, (r, pool) -> {
            throw new RejectedExecutionException(pool.isShutdown() ? CLOSED
                : "the webhook address resolver is busy: " + RESOLVER_QUEUE + " address checks are waiting");
          });
    }
    return resolver;
  }

  /**
   * The threads that send requests: up to {@code maxConcurrentRequests}, each kept a minute after its last request,
   * so that a steady flow of webhooks starts no thread per request; requests beyond wait in line.
   *
   * @throws RejectedExecutionException once the transport is closed
   */
  private synchronized ExecutorService senders() {
    checkOpen();
    if (senders == null) {
      AtomicInteger n = new AtomicInteger();
      SenderQueue queue = new SenderQueue();
      senders = new ThreadPoolExecutor(0, maxConcurrentRequests, 60, TimeUnit.SECONDS, queue, r -> {
        Thread t = new Thread(r, "idem-webhook-sender-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      }, (r, pool) -> {
        if (pool.isShutdown()) {
          throw new RejectedExecutionException(CLOSED);
        }
        queue.enqueue(r); // every thread was taken between the queue's check and the pool's
      });
      queue.pool = senders;
    }
    return senders;
  }

  /**
   * The senders' line: a request goes to an idle thread if there is one, else to a new thread while the pool is
   * below its maximum, and waits only when every thread is busy (a plain queue would make the pool start a thread
   * per request up to its core size, even with threads idle).
   */
  private static final class SenderQueue extends LinkedTransferQueue<Runnable> {
    private static final long serialVersionUID = 1L;
    private transient ThreadPoolExecutor pool;

    @Override
    public boolean offer(Runnable r) {
      if (tryTransfer(r)) {
        return true;
      }
      // false makes the pool start a thread; at its maximum, the request waits for one
      return pool.getPoolSize() >= pool.getMaximumPoolSize() && super.offer(r);
    }

    void enqueue(Runnable r) {
      super.offer(r);
    }
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  /** @throws RejectedExecutionException once the transport is closed: no thread is started for it again */
  private synchronized void checkOpen() {
    if (closed) {
      throw new RejectedExecutionException(CLOSED);
    }
  }

  /**
   * Stops the address resolver and sender threads, interrupting requests in flight (each then ends as a retry); the
   * HTTP client's resources go with it. A closed transport sends nothing more: every message is a retry.
   */
  @Override
  public synchronized void close() {
    closed = true;
    if (resolver != null) {
      resolver.shutdownNow();
      resolver = null;
    }
    if (senders != null) {
      senders.shutdownNow();
      senders = null;
    }
  }

  /**
   * Refuses hosts that resolve to an internal or special-purpose address, so that subscribers cannot point signed
   * requests at the internal network. A name that does not resolve is retried. The HTTP client resolves the name
   * again when it connects; pin addresses at the network level too when subscribers are untrusted.
   */
  private static DeliveryResult checkAddress(String host) {
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(host);
    } catch (UnknownHostException e) {
      return DeliveryResult.retry("cannot resolve " + host, null);
    }
    for (InetAddress a : addresses) {
      Optional<String> range = WebhookAddresses.range(a);
      if (range.isPresent()) {
        return DeliveryResult.permanent("webhook address " + a.getHostAddress() + " is internal: " + range.get()
            + ", a special-purpose range; allowPrivateAddresses is off", null);
      }
    }
    return null;
  }

  /**
   * Whether {@code a} is an address subscribers must not reach by default: one that {@link #specialPurposeRange}
   * places in a range.
   */
  public static boolean isInternalAddress(InetAddress a) {
    return WebhookAddresses.range(a).isPresent();
  }

  /**
   * The internal or special-purpose range that holds {@code a}, as {@code "<prefix> (<name>)"} such as
   * {@code "198.18.0.0/15 (benchmarking)"}, or empty for a globally reachable address. The ranges are those of the
   * IANA IPv4 and IPv6 Special-Purpose Address Registries (this network, private, shared, loopback, link-local, IETF
   * protocol assignments, documentation, AS112, AMT, 6to4, benchmarking, translation, discard-only, segment routing,
   * unique-local, reserved, limited broadcast), multicast, and every IPv6 address outside global unicast 2000::/3.
   * An IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}) is judged as its IPv4 address.
   */
  public static Optional<String> specialPurposeRange(InetAddress a) {
    return WebhookAddresses.range(a);
  }

  /**
   * Whether {@code host}, as a URL names it, is a numeric form other than dotted-decimal IPv4: a host whose last
   * label (trailing dots aside) is a number, as browsers judge it, but that is not four decimal numbers 0-255 without
   * leading zeros. Octal ({@code 0177.0.0.1}), hex ({@code 0x7f.0.0.1}, {@code 0x7f000001}), shortened
   * ({@code 127.1}), one-number ({@code 2130706433}) and mixed forms, a trailing dot ({@code 127.0.0.1.}) and
   * fullwidth digits are ambiguous: Java, curl and browsers read them as different addresses, so no address check of
   * one reading is safe. Names and bracketed IPv6 literals are not.
   */
  public static boolean isAmbiguousHost(String host) {
    return WebhookAddresses.isAmbiguous(host);
  }

  private DeliveryResult classify(OutboxMessage m, HttpResponse<?> response) {
    int status = response.statusCode();
    if (status >= 200 && status < 300) {
      return DeliveryResult.delivered();
    }
    if (status == 410) {
      endpoints.disable(m.destinationDetail(), "answered 410 Gone to event " + m.id());
      return DeliveryResult.permanent("HTTP 410: endpoint disabled", status);
    }
    Optional<Duration> after = status == 429 || status == 503
        ? response.headers().firstValue("retry-after").flatMap(v -> RetryAfter.parse(v, clock))
        : Optional.empty();
    return after.isPresent() ? DeliveryResult.retryAfter("HTTP " + status, status, after.get())
        : DeliveryResult.retry("HTTP " + status, status);
  }

  private DeliveryResult failure(Throwable error) {
    Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (e.getClass() == IOException.class && e.getCause() != null) {
      e = e.getCause(); // HttpClient.send wraps what went wrong in a plain IOException: name the cause
    }
    if (e instanceof HttpTimeoutException) {
      return DeliveryResult.retry("timed out after " + timeout.toMillis() + " ms", null);
    }
    return DeliveryResult.retry(OutboxTransport.describe(e), null);
  }

  @Override
  public String toString() {
    return "WebhookTransport{timeout=" + timeout + '}';
  }

  /** Builds a {@link WebhookTransport}. */
  public static final class Builder {
    private final WebhookEndpoints endpoints;
    private Duration timeout = Duration.ofSeconds(15);
    private Clock clock = Clock.systemUTC();
    private String userAgent = "Idem-Webhooks/1";
    private HttpClient client;
    private boolean allowPrivateAddresses;
    private int maxConcurrentRequests = 256;
    private Function<String, DeliveryResult> addressCheck;

    private Builder(WebhookEndpoints endpoints) {
      this.endpoints = Objects.requireNonNull(endpoints, "endpoints");
    }

    /** Per request, connecting included (default 15 s). Keep it well under the relay's lease. */
    public Builder timeout(Duration timeout) {
      if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0
          || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
        throw new IllegalArgumentException("timeout must be 1 ms to 5 min, got " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Builder userAgent(String userAgent) {
      this.userAgent = Objects.requireNonNull(userAgent, "userAgent");
      return this;
    }

    /**
     * Whether endpoints may resolve to internal or special-purpose addresses
     * ({@link WebhookTransport#specialPurposeRange}: loopback, private, link-local, unique-local, documentation,
     * benchmarking...; default false: such events die with an error naming the address and its range). Turn it on
     * for endpoints inside your own network, and for tests. Ambiguous numeric hosts
     * ({@link WebhookTransport#isAmbiguousHost}) are refused either way.
     */
    public Builder allowPrivateAddresses(boolean allow) {
      this.allowPrivateAddresses = allow;
      return this;
    }

    /**
     * How many requests may be in flight at once, across every batch sent through this transport (default 256,
     * 1..4096): each holds a thread until its answer is read or its time is up.
     */
    public Builder maxConcurrentRequests(int max) {
      if (max < 1 || max > 4096) {
        throw new IllegalArgumentException("maxConcurrentRequests must be 1 to 4096, got " + max);
      }
      this.maxConcurrentRequests = max;
      return this;
    }

    /**
     * For tests: the address check of a host (null: allowed; else the failure), run on the resolver threads instead
     * of the look-up and the internal-address rule, whether or not private addresses are allowed.
     */
    Builder addressCheck(Function<String, DeliveryResult> check) {
      this.addressCheck = Objects.requireNonNull(check, "check");
      return this;
    }

    /** The HTTP client to use (default: a new one that never follows redirects). */
    public Builder httpClient(HttpClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    public WebhookTransport build() {
      return new WebhookTransport(this);
    }
  }
}
