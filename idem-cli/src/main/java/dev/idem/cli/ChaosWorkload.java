package dev.idem.cli;

import dev.idem.client.Attempt;
import dev.idem.client.IdempotentHttpClient;
import dev.idem.client.Intent;
import dev.idem.client.IntentPendingException;
import dev.idem.client.PayloadMismatchException;
import dev.idem.client.Response;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.examples.payments.web.PaymentsProblems;
import dev.idem.retry.RetryPolicy;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The seeded workload of a chaos run and everything it observed. A scheduler ticks at the configured rate; each tick
 * draws one intent from the seeded generator (a new payment, a duplicate of an earlier payment or refund sent to any
 * instance, a refund, a burst of concurrent sends of one key, a payload mismatch, a refund of another tenant's
 * payment, a key another tenant used) and hands it to a pool of workers that send it through
 * {@link IdempotentHttpClient} (the same key on every retry). When the client gives up on an instance (killed,
 * restarting), the worker sends the same intent, same key, to another instance. Which earlier payments a tick picks
 * depends on which answers have arrived, so two runs with one seed send the same new intents but not exactly the same
 * mix. Thread-safe.
 */
final class ChaosWorkload {
  static final List<String> TENANTS = List.of("acme", "globex", "initech");
  static final int BURST = 8;
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final int MAX_HOPS = 4;
  private static final int MAX_EXAMPLES = 20;

  enum Kind { PAYMENT, DUPLICATE, REFUND, BURST, MISMATCH, CROSS_TENANT, SHARED_KEY }

  /** One intent: who sends what to which route with which key. */
  record Spec(Kind kind, String tenant, String path, String key, byte[] body, String account, long amount) {}

  /** A kept answer as the client saw it: status, Location and body. */
  record Kept(int status, String location, byte[] body) {
    boolean sameAs(Kept other) {
      return status == other.status && java.util.Objects.equals(location, other.location)
          && Arrays.equals(body, other.body);
    }

    @Override
    public String toString() {
      return status + " Location " + location + " " + new String(body, StandardCharsets.UTF_8);
    }
  }

  /** A payment or refund whose 201 reached the workload. */
  record Acked(String tenant, String key, String id, String account, long amount, String paymentId) {}

  private final ChaosSettings settings;
  private final List<ChaosInstance> instances;
  private final ChaosTimeline timeline;
  private final SplittableRandom random;
  private final IdempotentHttpClient client;
  private final ThreadPoolExecutor workers;
  private long sequence;

  private final List<Spec> sentPayments = new ArrayList<>();
  /** (tenant, key) of every payment intent drawn: a key another tenant used is reused only once per tenant. */
  private final java.util.Set<String> usedKeys = new java.util.HashSet<>();
  final List<Acked> ackedPayments = new ArrayList<>();
  final List<Acked> ackedRefunds = new ArrayList<>();
  private final List<Spec> sentRefunds = new ArrayList<>();
  /** The first kept answer per (tenant, key): every later kept answer must equal it. */
  private final Map<String, Kept> firstKept = new ConcurrentHashMap<>();
  /** (tenant, object id) of every object an answer or an event showed to that tenant. */
  final ConcurrentLinkedQueue<String[]> shown = new ConcurrentLinkedQueue<>();

  final LongAdder intents = new LongAdder();
  final LongAdder requests = new LongAdder();
  final LongAdder attempts = new LongAdder();
  final LongAdder retries = new LongAdder();
  final LongAdder failovers = new LongAdder();
  final LongAdder duplicates = new LongAdder();
  final LongAdder refundDuplicates = new LongAdder();
  final LongAdder replayComparisons = new LongAdder();
  final LongAdder bursts = new LongAdder();
  final LongAdder replays = new LongAdder();
  final LongAdder inProgressConflicts = new LongAdder();
  final LongAdder payloadMismatches = new LongAdder();
  final LongAdder crossTenantProbes = new LongAdder();
  final LongAdder sharedKeys = new LongAdder();
  final LongAdder providerTimeoutsSeen = new LongAdder();
  final LongAdder unavailableSeen = new LongAdder();
  final LongAdder transportFailures = new LongAdder();
  final LongAdder unanswered = new LongAdder();
  /**
   * Of the unanswered intents, those that were in flight while the provider was down (--provider-down): their client
   * gave up during the outage, and their records are left to the completer, the resume cap and reconciliation.
   */
  final LongAdder unansweredInOutage = new LongAdder();
  /** Answers 409 {@code CONFLICT.idempotency.outcome_uncertain}: the key's record was uncertain. */
  final LongAdder uncertainAnswers = new LongAdder();
  /** Answers 422 {@code PAYMENT.not_charged} or {@code REFUND.not_made}: an uncertain record reconciled as failed. */
  final LongAdder reconciledFailedAnswers = new LongAdder();
  /** Whether the provider is down now; {@link #outageChanges} counts its ups and downs. */
  volatile boolean providerDown;
  final AtomicInteger outageChanges = new AtomicInteger();
  final LongAdder shed = new LongAdder();
  /** Answers (first ones and replays) that were the provider's refusal for good: 422 {@code PROVIDER.*}. */
  final LongAdder refusedPaymentAnswers = new LongAdder();
  final LongAdder refusedRefundAnswers = new LongAdder();
  /** The payments and refunds a refusal named: each must end {@code failed}, never booked nor charged. */
  final Set<String> refusedPayments = ConcurrentHashMap.newKeySet();
  final Set<String> refusedRefunds = ConcurrentHashMap.newKeySet();
  final LongAdder keptAnswers = new LongAdder();
  final Map<Integer, LongAdder> finalStatuses = new ConcurrentHashMap<>();
  final LongAdder replayViolations = new LongAdder();
  final LongAdder tenantViolations = new LongAdder();
  final LongAdder unexpectedMismatches = new LongAdder();
  final ConcurrentLinkedQueue<String> replayExamples = new ConcurrentLinkedQueue<>();
  final ConcurrentLinkedQueue<String> tenantExamples = new ConcurrentLinkedQueue<>();
  final ConcurrentLinkedQueue<String> clientErrors = new ConcurrentLinkedQueue<>();

  ChaosWorkload(ChaosSettings settings, List<ChaosInstance> instances, ChaosTimeline timeline) {
    this.settings = settings;
    this.instances = instances;
    this.timeline = timeline;
    this.random = new SplittableRandom(settings.seed());
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();
    this.client = IdempotentHttpClient.builder().name("chaos").httpClient(http)
        .policy(RetryPolicy.builder().maxAttempts(6).backoff(Duration.ofMillis(50), Duration.ofSeconds(1))
            .deadline(Duration.ofSeconds(20)).attemptTimeout(Duration.ofSeconds(8)).build())
        .build();
    this.workers = new ThreadPoolExecutor(64, 64, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(4000), r -> {
      Thread t = new Thread(r, "chaos-worker");
      t.setDaemon(true);
      return t;
    });
  }

  /** Random at each run, so that the run's API keys and admin key cannot be guessed. */
  static final String RUN_TOKEN = HexFormat.of().formatHex(randomBytes());

  static String apiKey(String tenant) {
    return "sk_chaos_" + tenant + "_" + RUN_TOKEN;
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[12];
    new SecureRandom().nextBytes(bytes);
    return bytes;
  }

  /**
   * Runs the workload for the configured duration at the configured rate, then waits (bounded) for the intents in
   * flight. Returns when every worker is idle or {@code drain} has passed.
   *
   * @return whether every worker ended (false: some were still running after the drain and the interrupt)
   */
  boolean run(Duration drain) throws InterruptedException {
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "chaos-ticker");
      t.setDaemon(true);
      return t;
    });
    long period = Math.max(1, Math.round(1_000_000_000.0 / settings.rate()));
    long ticks = Math.max(1, Math.round(settings.rate() * settings.duration().toMillis() / 1000.0));
    CountDownLatch done = new CountDownLatch(1);
    AtomicLong ticked = new AtomicLong();
    ScheduledFuture<?> task = ticker.scheduleAtFixedRate(() -> {
      if (ticked.incrementAndGet() > ticks) {
        done.countDown();
        return;
      }
      try {
        tick();
      } catch (RuntimeException e) {
        note(clientErrors, "tick: " + e);
      }
    }, 0, period, TimeUnit.NANOSECONDS);
    done.await(settings.duration().toMillis() + 30_000, TimeUnit.MILLISECONDS);
    task.cancel(false);
    ticker.shutdownNow();
    workers.shutdown();
    if (!workers.awaitTermination(drain.toMillis(), TimeUnit.MILLISECONDS)) {
      workers.shutdownNow();
      return workers.awaitTermination(10, TimeUnit.SECONDS);
    }
    return true;
  }

  /** Draws the next intent on the ticker thread (so the seeded draws come in one order) and submits it. */
  private void tick() {
    int roll = random.nextInt(100);
    Spec spec;
    if (roll < 45) {
      spec = newPayment(Kind.PAYMENT, randomTenant(), null);
    } else if (roll < 50) {
      spec = pickSentRefund();
      if (spec != null) {
        duplicates.increment();
        refundDuplicates.increment();
        submit(new Spec(Kind.DUPLICATE, spec.tenant(), spec.path(), spec.key(), spec.body(), spec.account(),
            spec.amount()));
        return;
      }
      spec = newPayment(Kind.PAYMENT, randomTenant(), null);
    } else if (roll < 65) {
      spec = pickSent();
      if (spec != null) {
        duplicates.increment();
        submit(new Spec(Kind.DUPLICATE, spec.tenant(), spec.path(), spec.key(), spec.body(), spec.account(),
            spec.amount()));
        return;
      }
      spec = newPayment(Kind.PAYMENT, randomTenant(), null);
    } else if (roll < 79) {
      Acked paid = pickAcked(null);
      spec = paid == null ? newPayment(Kind.PAYMENT, randomTenant(), null)
          : refund(Kind.REFUND, paid.tenant(), paid, 1 + random.nextLong(Math.max(1, paid.amount() / 2)));
    } else if (roll < 84) {
      spec = newPayment(Kind.BURST, randomTenant(), null);
      bursts.increment();
      duplicates.add(BURST - 1);
      submitBurst(spec);
      return;
    } else if (roll < 89) {
      Acked paid = pickAcked(null);
      if (paid == null) {
        spec = newPayment(Kind.PAYMENT, randomTenant(), null);
      } else {
        spec = new Spec(Kind.MISMATCH, paid.tenant(), "/payments", paid.key(),
            paymentBody(paid.account(), paid.amount() + 1), paid.account(), paid.amount() + 1);
      }
    } else if (roll < 94) {
      String caller = randomTenant();
      Acked other = pickAcked(caller);
      spec = other == null ? newPayment(Kind.PAYMENT, caller, null) : refund(Kind.CROSS_TENANT, caller, other, 1);
    } else {
      String caller = randomTenant();
      Acked other = pickAcked(caller);
      boolean reuse = other != null && !usedKeys.contains(caller + "\n" + other.key());
      spec = newPayment(reuse ? Kind.SHARED_KEY : Kind.PAYMENT, caller, reuse ? other.key() : null);
    }
    submit(spec);
  }

  private Spec newPayment(Kind kind, String tenant, String key) {
    long n = ++sequence;
    boolean declined = random.nextInt(100) < 3;
    String account = (declined ? "acct_declined_" : "acct_") + tenant + "_" + n;
    long amount = 100 + random.nextLong(9_900);
    Spec spec = new Spec(kind, tenant, "/payments", key != null ? key : "chaos-" + settings.seed() + "-" + n,
        paymentBody(account, amount), account, amount);
    usedKeys.add(tenant + "\n" + spec.key());
    synchronized (sentPayments) {
      sentPayments.add(spec);
    }
    return spec;
  }

  private Spec refund(Kind kind, String tenant, Acked payment, long amount) {
    long n = ++sequence;
    String body = "{\"payment_id\":\"" + payment.id() + "\",\"amount\":" + amount + "}";
    Spec spec = new Spec(kind, tenant, "/refunds", "chaos-" + settings.seed() + "-" + n,
        body.getBytes(StandardCharsets.UTF_8), payment.account(), amount);
    if (kind == Kind.REFUND) {
      synchronized (sentRefunds) {
        sentRefunds.add(spec);
      }
    }
    return spec;
  }

  private static byte[] paymentBody(String account, long amount) {
    return ("{\"account_id\":\"" + account + "\",\"amount\":" + amount
        + ",\"currency\":\"EUR\",\"description\":\"chaos\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private String randomTenant() {
    return TENANTS.get(random.nextInt(TENANTS.size()));
  }

  private Spec pickSent() {
    synchronized (sentPayments) {
      return sentPayments.isEmpty() ? null : sentPayments.get(random.nextInt(sentPayments.size()));
    }
  }

  private Spec pickSentRefund() {
    synchronized (sentRefunds) {
      return sentRefunds.isEmpty() ? null : sentRefunds.get(random.nextInt(sentRefunds.size()));
    }
  }

  /** A captured payment whose 201 arrived: of any tenant but {@code notOf}. */
  private Acked pickAcked(String notOf) {
    synchronized (ackedPayments) {
      for (int i = 0; i < 8 && !ackedPayments.isEmpty(); i++) {
        Acked a = ackedPayments.get(random.nextInt(ackedPayments.size()));
        if (notOf == null || !a.tenant().equals(notOf)) {
          return a;
        }
      }
      return null;
    }
  }

  private void submit(Spec spec) {
    int preferred = random.nextInt(instances.size());
    try {
      workers.execute(() -> send(spec, preferred));
    } catch (RejectedExecutionException e) {
      shed.increment();
    }
  }

  private void submitBurst(Spec spec) {
    CountDownLatch gate = new CountDownLatch(1);
    for (int i = 0; i < BURST; i++) {
      int preferred = random.nextInt(instances.size());
      try {
        workers.execute(() -> {
          try {
            if (gate.await(5, TimeUnit.SECONDS)) {
              send(spec, preferred);
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      } catch (RejectedExecutionException e) {
        shed.increment();
      }
    }
    gate.countDown();
  }

  private ChaosInstance target(int preferred, int hop) {
    int n = instances.size();
    for (int i = 0; i < n; i++) {
      ChaosInstance candidate = instances.get((preferred + hop + i) % n);
      if (candidate.isUp()) {
        return candidate;
      }
    }
    return instances.get((preferred + hop) % n);
  }

  /** The provider goes down ({@code true}) or comes back. */
  void providerDown(boolean down) {
    providerDown = down;
    outageChanges.incrementAndGet();
  }

  private void send(Spec spec, int preferred) {
    intents.increment();
    int changes = outageChanges.get();
    boolean downAtStart = providerDown;
    for (int hop = 0; hop < MAX_HOPS; hop++) {
      ChaosInstance target = target(preferred, hop);
      requests.increment();
      if (hop > 0) {
        failovers.increment();
      }
      Intent intent = Intent.post(target.uri(spec.path()), spec.body()).withKey(spec.key())
          .withHeader("Authorization", "Bearer " + apiKey(spec.tenant()))
          .withHeader("Content-Type", "application/json");
      try {
        Response r = client.send(intent);
        countAttempts(r.attempts());
        record(spec, r);
        return;
      } catch (PayloadMismatchException e) {
        countAttempts(e.attempts());
        timeline.answer();
        if (spec.kind() == Kind.MISMATCH) {
          payloadMismatches.increment();
        } else {
          unexpectedMismatches.increment();
          note(replayExamples, spec.tenant() + " " + spec.key() + " (" + spec.kind() + "): unexpected payload"
              + " mismatch " + e.status());
        }
        return;
      } catch (IntentPendingException e) {
        countAttempts(e.attempts());
        timeline.error();
      } catch (RuntimeException e) {
        timeline.error();
        note(clientErrors, spec.key() + ": " + e);
      }
    }
    unanswered.increment();
    if (downAtStart || providerDown || changes != outageChanges.get()) {
      unansweredInOutage.increment();
    }
  }

  private void countAttempts(List<Attempt> list) {
    attempts.add(list.size());
    retries.add(Math.max(0, list.size() - 1));
    for (Attempt a : list) {
      if (a.status() == 0) {
        transportFailures.increment();
        timeline.error();
      } else if (a.status() == 409 && IdempotentHttpClient.IN_PROGRESS.equals(a.code())) {
        inProgressConflicts.increment();
        timeline.conflict();
      } else if (a.status() == 504) {
        providerTimeoutsSeen.increment();
        timeline.error();
      } else if (a.status() >= 500) {
        unavailableSeen.increment();
        timeline.error();
      }
    }
  }

  private void record(Spec spec, Response r) {
    timeline.answer();
    finalStatuses.computeIfAbsent(r.status(), s -> new LongAdder()).increment();
    if (r.status() == 409 && ProblemCode.OUTCOME_UNCERTAIN.is(r.problemCode().orElse(null))) {
      uncertainAnswers.increment();
    }
    if (r.isReplayed()) {
      replays.increment();
    }
    boolean kept = r.headers().firstValue(IdemHeaders.IDEMPOTENCY_STATUS).isPresent();
    if (kept) {
      keptAnswers.increment();
      Kept answer = new Kept(r.status(), r.headers().firstValue("Location").orElse(null), r.body());
      Kept first = firstKept.putIfAbsent(spec.tenant() + "\n" + spec.key(), answer);
      if (first != null) {
        replayComparisons.increment();
        if (!first.sameAs(answer)) {
          replayViolations.increment();
          note(replayExamples, spec.tenant() + " " + spec.key() + ": first " + first + " then " + answer);
        }
      }
    }
    if (spec.kind() == Kind.CROSS_TENANT) {
      crossTenantProbes.increment();
      if (r.status() != 404 || !PaymentsProblems.PAYMENT_NOT_FOUND.is(r.problemCode().orElse(null))) {
        tenantViolation(spec, "a refund of another tenant's payment answered " + r.status() + " " + r.bodyText());
      }
      return;
    }
    if (spec.kind() == Kind.SHARED_KEY) {
      sharedKeys.increment();
    }
    JsonNode body;
    try {
      body = JSON.readTree(r.body());
    } catch (RuntimeException e) {
      if (r.status() < 500) {
        note(clientErrors, spec.key() + ": answer " + r.status() + " is not JSON: " + r.bodyText());
      }
      return;
    }
    String account = text(body, "account_id");
    if (account != null && !account.equals(spec.account())) {
      tenantViolation(spec, "answer names account " + account + ", sent " + spec.account());
    }
    String id = text(body, "id");
    String paymentId = text(body, "payment_id");
    if (id != null) {
      shown.add(new String[] {spec.tenant(), id, spec.key()});
    }
    if (r.status() == 422 && r.problemCode().orElse("").startsWith("PROVIDER.")) {
      refused(spec, body);
    }
    if (r.status() == 422 && (PaymentsProblems.PAYMENT_NOT_CHARGED.is(r.problemCode().orElse(null))
        || PaymentsProblems.REFUND_NOT_MADE.is(r.problemCode().orElse(null)))) {
      reconciledFailedAnswers.increment();
    }
    if (paymentId != null) {
      shown.add(new String[] {spec.tenant(), paymentId, spec.key()});
    }
    if (r.status() == 201 && id != null) {
      long amount = body.path("amount").asLong();
      if (amount != spec.amount()) {
        tenantViolation(spec, "answer has amount " + amount + ", sent " + spec.amount());
      }
      if (spec.path().equals("/payments")) {
        synchronized (ackedPayments) {
          if (spec.kind() != Kind.MISMATCH && ackedPayments.stream().noneMatch(a -> a.id().equals(id))) {
            ackedPayments.add(new Acked(spec.tenant(), spec.key(), id, spec.account(), amount, null));
          }
        }
      } else {
        synchronized (ackedRefunds) {
          if (ackedRefunds.stream().noneMatch(a -> a.id().equals(id))) {
            ackedRefunds.add(new Acked(spec.tenant(), spec.key(), id, spec.account(), amount, paymentId));
          }
        }
      }
    }
  }

  /** A 422 refusal for good is a final outcome: counted, and its payment or refund remembered for the invariants. */
  private void refused(Spec spec, JsonNode body) {
    boolean payment = spec.path().equals("/payments");
    String id = text(body, payment ? "payment_id" : "refund_id");
    (payment ? refusedPaymentAnswers : refusedRefundAnswers).increment();
    if (id == null) {
      note(clientErrors, spec.key() + ": a provider refusal names no " + (payment ? "payment_id" : "refund_id"));
      return;
    }
    (payment ? refusedPayments : refusedRefunds).add(id);
    if (!payment) {
      shown.add(new String[] {spec.tenant(), id, spec.key()});
    }
  }

  private void tenantViolation(Spec spec, String what) {
    tenantViolations.increment();
    note(tenantExamples, spec.tenant() + " " + spec.key() + " (" + spec.kind() + "): " + what);
  }

  static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() || v.isContainer() ? null : v.asString();
  }

  static void note(ConcurrentLinkedQueue<String> examples, String line) {
    if (examples.size() < MAX_EXAMPLES) {
      examples.add(line.length() > 600 ? line.substring(0, 600) + "..." : line);
    }
  }

  Map<String, Long> statusCounts() {
    Map<String, Long> out = new TreeMap<>();
    finalStatuses.forEach((k, v) -> out.put(Integer.toString(k), v.sum()));
    return out;
  }

  /** Per-second counts for the chart, and the marks (kills, restarts, the PostgreSQL restart). */
  static final class ChaosTimeline {
    private static final int MAX_SECONDS = 24 * 3600 + 600;
    private final long start = System.nanoTime();
    private final int seconds;
    final AtomicLongArray answers;
    final AtomicLongArray errors;
    final AtomicLongArray conflicts;
    final ConcurrentLinkedQueue<Mark> marks = new ConcurrentLinkedQueue<>();

    /** A vertical line on the chart. */
    record Mark(double second, String kind, String label) {}

    ChaosTimeline(Duration length) {
      seconds = (int) Math.min(MAX_SECONDS, length.toSeconds() + 1);
      answers = new AtomicLongArray(seconds);
      errors = new AtomicLongArray(seconds);
      conflicts = new AtomicLongArray(seconds);
    }

    double now() {
      return (System.nanoTime() - start) / 1e9;
    }

    private int slot() {
      return (int) Math.min(seconds - 1, Math.max(0, (long) now()));
    }

    void answer() {
      answers.incrementAndGet(slot());
    }

    void error() {
      errors.incrementAndGet(slot());
    }

    void conflict() {
      conflicts.incrementAndGet(slot());
    }

    void mark(String kind, String label) {
      marks.add(new Mark(now(), kind, label));
    }

    /** The seconds with data: up to the last non-empty one. */
    int length() {
      int last = 0;
      for (int i = 0; i < seconds; i++) {
        if (answers.get(i) + errors.get(i) + conflicts.get(i) > 0) {
          last = i;
        }
      }
      for (Mark m : marks) {
        last = Math.max(last, (int) m.second());
      }
      return Math.min(seconds, last + 1);
    }
  }
}
