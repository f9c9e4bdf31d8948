package dev.idem.examples.payments.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The crash test the project's issue asks for: {@code kill -9} the payments service with requests in flight, restart
 * it on the same database and retry everything; every key has exactly one effect, and no record is left in progress
 * after the completer's window.
 *
 * <p>The service runs in a child JVM ({@link ServiceProcess}) with a short lease and a fast completer, and a provider
 * latency that keeps requests inside the provider call long enough to be caught there. {@value #ORDERS} payments,
 * each with its own key, account and fixed body, are sent by {@value #SENDERS} concurrent clients; once the provider
 * has made {@value #KILL_AFTER_CHARGES} charges, in a burst of charges, the child gets SIGKILL. At that moment some
 * payments are answered (acknowledged), some are cut off mid-request (in any phase: before the claim, in
 * {@code create}, waiting for the provider, charged but not captured, committed but not yet answered) and the rest
 * were never sent. The service is restarted on the same database, and every key is retried with its same body until
 * its answer is final (a {@code 409} in progress or a retryable {@code 503}/{@code 504} is retried after its
 * {@code Retry-After}): at once,
 * except every second key whose record the kill left in progress, which is left to the completer and retried only
 * once the completer's window has passed. Then:
 *
 * <ul>
 *   <li>no idempotency record is in progress once the completer's window has passed, and the keys left to the
 *       completer are answered with a replay of what it completed;
 *   <li>every key's final answer is a {@code 201}, each with a payment of its own that reads back as captured;
 *   <li>every answer acknowledged before the kill is byte-identical to the final answer for its key;
 *   <li>the provider charged each account exactly once, with the charge the payment records, and the ledger has
 *       exactly one pair of entries per payment (checked over HTTP and with exact counts in the database of the run);
 *   <li>every record is completed, with the {@code 201}.
 * </ul>
 *
 * Each database runs it in a subclass on a database (H2 file) or schema (PostgreSQL) of its own. Nothing here sleeps
 * to let a race happen: every wait polls an observable condition under a deadline, or honours a
 * {@code Retry-After}.
 */
abstract class KillNineRecoveryTest {
  static final int ORDERS = 40;
  static final int SENDERS = 10;
  static final int KILL_AFTER_CHARGES = 12;
  static final int FALLBACK_CHARGES = ORDERS * 3 / 4;
  static final Duration LEASE = Duration.ofSeconds(3);
  static final List<String> SERVICE_ARGS = List.of(
      "--idem.default-lease=3s",
      "--idem.completer.interval=1s",
      "--payments.provider.latency-ms=150");
  static final Duration STARTUP = Duration.ofSeconds(60);
  static final Duration REACH_KILL_POINT = Duration.ofSeconds(30);
  static final Duration RETRY_DEADLINE = Duration.ofSeconds(60);
  static final Duration COMPLETER_WINDOW = LEASE.multipliedBy(5);
  static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(5);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  @TempDir
  Path dir;

  final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final String tenant = "kill_" + run;
  private final String apiKey = "sk_kill_" + run;
  private final List<ServiceProcess> children = new ArrayList<>();

  /** Creates the database (or schema) of this run. */
  abstract void openDatabase(Path dir) throws Exception;

  /** The {@code --spring.datasource.*} arguments that point the service at the database of this run. */
  abstract List<String> datasourceArgs();

  /**
   * A connection to the database as the kill left it, to look at without disturbing it; the service is dead. (H2
   * opens a copy of the files, so that the restarted service, not this look, recovers the database.)
   */
  abstract Connection connectAfterKill() throws Exception;

  /** A connection to the database of this run; the service is not running. */
  abstract Connection connect() throws SQLException;

  /** Drops the database (or schema) of this run; every child is dead by then. */
  abstract void closeDatabase() throws Exception;

  /** A short name of the database, for the report line. */
  abstract String databaseName();

  @BeforeEach
  void setUp() throws Exception {
    openDatabase(dir);
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      children.forEach(ServiceProcess::close);
    } finally {
      closeDatabase();
    }
  }

  @Test
  void killNineWithRequestsInFlightThenRetryingEverythingLeavesExactlyOneEffectPerKey() throws Throwable {
    try {
      scenario();
    } catch (Throwable t) {
      for (ServiceProcess child : children) {
        String tail = child.logTail();
        System.err.println(tail);
        t.addSuppressed(new AssertionError(tail, null));
      }
      throw t;
    }
  }

  private void scenario() throws Exception {
    long t0 = System.nanoTime();
    List<Order> orders = new ArrayList<>();
    for (int i = 0; i < ORDERS; i++) {
      orders.add(new Order(i, "kill9-" + run + "-" + i, "acct_k" + i + "_" + run, 100 + i));
    }

    // ---- 1. the service, with requests in flight, killed with SIGKILL
    ServiceProcess first = start("service-1");
    long started = System.nanoTime();
    HttpClient http = client();
    Map<String, Reply> acknowledged = new ConcurrentHashMap<>();
    Map<String, String> cutOff = new ConcurrentHashMap<>();
    Set<String> notSent = ConcurrentHashMap.newKeySet();
    AtomicBoolean killed = new AtomicBoolean();
    ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
    List<Future<?>> sent = new ArrayList<>();
    boolean sendersEnded;
    try {
      for (Order o : orders) {
        sent.add(senders.submit(() -> {
          if (killed.get()) {
            notSent.add(o.key());
            return;
          }
          try {
            acknowledged.put(o.key(), pay(http, first, o));
          } catch (ConnectException e) {
            notSent.add(o.key());
          } catch (IOException e) {
            cutOff.put(o.key(), e.toString());
          }
        }));
      }
      // The senders move in rounds: they all wait for the provider at once, then its charges and the captures come
      // in a burst. Kill in a burst, when the provider has charged payments not captured yet (the moment its
      // idempotency on the derived key is for) and the round's records are in progress; not between two rounds, when
      // there is little to recover. Captures are read before charges, so more charges than captures means a charge
      // since, or one not captured: a burst is under way. The bursts are short; from FALLBACK_CHARGES on, any moment
      // with payments unanswered will do.
      JsonNode atKill = awaitJson("the provider made " + KILL_AFTER_CHARGES + " charges, in a burst of charges",
          REACH_KILL_POINT,
          () -> {
            long captured = getJson(http, first, "/ledger/summary").path("payments").asLong();
            long charges = getJson(http, first, "/admin/provider/stats").path("charges").asLong();
            return JSON.createObjectNode().put("captured", captured).put("charges", charges)
                .put("answered", acknowledged.size());
          },
          seen -> acknowledged.size() < ORDERS && seen.path("charges").asLong() >= KILL_AFTER_CHARGES
              && (seen.path("charges").asLong() > seen.path("captured").asLong()
                  || seen.path("charges").asLong() >= FALLBACK_CHARGES));
      first.kill();
      killed.set(true);
      System.out.println("[" + databaseName() + "] kill -9 of pid " + first.pid() + " when the service had just"
          + " shown " + atKill + "; " + acknowledged.size() + " answers received");
    } finally {
      first.close();
      senders.shutdown();
      sendersEnded = senders.awaitTermination(60, TimeUnit.SECONDS);
    }
    assertThat(sendersEnded).as("the senders ended after the kill").isTrue();
    for (Future<?> f : sent) {
      try {
        f.get();
      } catch (ExecutionException e) {
        throw new AssertionError("a sender failed: " + e.getCause(), e.getCause());
      }
    }
    long killedAt = System.nanoTime();
    assertThat(acknowledged.size() + cutOff.size() + notSent.size()).isEqualTo(ORDERS);
    assertThat(cutOff).as("payments cut off by the kill mid-request (the premise of the test)").isNotEmpty();
    for (Map.Entry<String, Reply> a : acknowledged.entrySet()) {
      assertThat(a.getValue().status()).as("the answer acknowledged before the kill for " + a.getKey() + ": "
          + a.getValue()).isEqualTo(201);
    }

    Snapshot atKill;
    try (Connection c = connectAfterKill()) {
      atKill = snapshot(c);
    }
    System.out.println("[" + databaseName() + "] at the kill: " + acknowledged.size() + " acknowledged, "
        + cutOff.size() + " cut off mid-request, " + notSent.size() + " never sent; database " + atKill.counts());
    assertThat(atKill.inProgressKeys()).as("records the kill left in progress (the premise of the test)")
        .isNotEmpty();
    assertThat(cutOff.keySet()).as("every record left in progress is of a payment cut off by the kill")
        .containsAll(atKill.inProgressKeys());

    // ---- 2. restarted on the same database; every key retried with its body until its answer is final. Every
    // second record the kill left in progress is left to the completer: its key is retried only after the
    // completer's window, when nothing may be in progress any more. All other keys are retried at once, racing the
    // completer for the records in progress.
    List<String> inProgressAtKill = orders.stream().map(Order::key).filter(atKill.inProgressKeys()::contains)
        .toList();
    Set<String> leftToCompleter = new HashSet<>();
    for (int i = 1; i < inProgressAtKill.size(); i += 2) {
      leftToCompleter.add(inProgressAtKill.get(i));
    }
    ServiceProcess second = start("service-2");
    long restarted = System.nanoTime();
    HttpClient http2 = client();
    long deadline = System.nanoTime() + RETRY_DEADLINE.toNanos();
    Map<String, Final> finals = new LinkedHashMap<>();
    finals.putAll(retryAll(http2, second, orders.stream().filter(o -> !leftToCompleter.contains(o.key())).toList(),
        deadline));
    long retriedFirst = System.nanoTime();

    // ---- 3. nothing left in progress once the completer's window has passed
    JsonNode inProgress = awaitJson("no idempotency record in progress", COMPLETER_WINDOW,
        () -> getJson(http2, second, "/admin/idempotency-records?state=in_progress&limit=500"),
        page -> page.path("records").isEmpty());
    assertThat(inProgress.path("next").isNull()).isTrue();
    long completerDone = System.nanoTime();
    Map<String, Final> late = retryAll(http2, second,
        orders.stream().filter(o -> leftToCompleter.contains(o.key())).toList(), deadline);
    for (Map.Entry<String, Final> f : late.entrySet()) {
      assertThat(f.getValue().reply().header("Idempotency-Status"))
          .as("the answer for " + f.getKey() + ", which only the completer resumed: " + f.getValue().reply())
          .isEqualTo("replayed");
    }
    finals.putAll(late);
    long retriedAll = System.nanoTime();

    // ---- 4. exactly one effect per key, over HTTP
    Set<String> paymentIds = new HashSet<>();
    for (Order o : orders) {
      Final f = finals.get(o.key());
      Reply answer = f.reply();
      assertThat(answer.status()).as("the final answer for " + o + " after " + f.attempts() + " attempts: "
          + answer).isEqualTo(201);
      JsonNode payment = answer.json();
      String id = payment.path("id").asString();
      assertThat(id).as(answer.toString()).startsWith("pay_");
      assertThat(paymentIds.add(id)).as("payment " + id + " answers more than one key").isTrue();
      assertThat(answer.header("Location")).isEqualTo("/payments/" + id);
      assertThat(payment.path("account_id").asString()).isEqualTo(o.account());
      assertThat(payment.path("amount").asLong()).isEqualTo(o.amount());
      assertThat(payment.path("status").asString()).isEqualTo("captured");
      String chargeId = payment.path("provider_charge_id").asString();

      Reply ack = acknowledged.get(o.key());
      if (ack != null) {
        assertThat(answer.body()).as("the final answer for " + o.key() + " is byte-identical to the one"
            + " acknowledged before the kill:\n  before: " + ack + "\n  after:  " + answer).isEqualTo(ack.body());
        assertThat(answer.header("Location")).isEqualTo(ack.header("Location"));
        assertThat(answer.header("Idempotency-Status")).isEqualTo("replayed");
      }

      JsonNode read = getJson(http2, second, "/payments/" + id);
      assertThat(read.path("id").asString()).isEqualTo(id);
      assertThat(read.path("account_id").asString()).isEqualTo(o.account());
      assertThat(read.path("amount").asLong()).isEqualTo(o.amount());
      assertThat(read.path("status").asString()).isEqualTo("captured");
      assertThat(read.path("provider_charge_id").asString()).isEqualTo(chargeId);

      JsonNode entries = getJson(http2, second, "/ledger?limit=1000&account_id=" + encode(o.account()))
          .path("entries");
      assertThat(entries.size()).as("ledger entries of " + o.account() + ": " + entries).isEqualTo(1);
      assertThat(entries.get(0).path("direction").asString()).isEqualTo("debit");
      assertThat(entries.get(0).path("reference_id").asString()).isEqualTo(id);
      assertThat(entries.get(0).path("amount").asLong()).isEqualTo(o.amount());

      JsonNode charges = getJson(http2, second, "/provider/charges?account_id=" + encode(o.account()))
          .path("charges");
      assertThat(charges.size()).as("provider charges of " + o.account() + ": " + charges).isEqualTo(1);
      assertThat(charges.get(0).path("id").asString()).isEqualTo(chargeId);
      assertThat(charges.get(0).path("amount").asLong()).isEqualTo(o.amount());
      assertThat(charges.get(0).path("status").asString()).isEqualTo("succeeded");
    }
    JsonNode credits = getJson(http2, second, "/ledger?limit=1000&account_id=" + encode("merchant:" + tenant))
        .path("entries");
    List<String> credited = new ArrayList<>();
    for (JsonNode e : credits) {
      assertThat(e.path("direction").asString()).as(e.toString()).isEqualTo("credit");
      credited.add(e.path("reference_id").asString());
    }
    assertThat(credited).as("the merchant's credits: one per payment").containsExactlyInAnyOrderElementsOf(
        paymentIds);
    JsonNode stats = getJson(http2, second, "/admin/provider/stats");
    assertThat(stats.path("charges").asLong()).as(stats.toString()).isEqualTo(ORDERS);
    assertThat(stats.path("declined_charges").asLong()).as(stats.toString()).isZero();

    assertThat(getJson(http2, second, "/admin/idempotency-records?state=in_progress&limit=500").path("records")
        .isEmpty()).as("no record in progress at the end").isTrue();
    JsonNode completed = getJson(http2, second, "/admin/idempotency-records?state=completed&limit=500");
    List<String> completedKeys = new ArrayList<>();
    for (JsonNode r : completed.path("records")) {
      assertThat(r.path("scope").asString()).isEqualTo(tenant);
      assertThat(r.path("response_status").asInt()).as(r.toString()).isEqualTo(201);
      completedKeys.add(r.path("key").asString());
    }
    assertThat(completedKeys).containsExactlyInAnyOrderElementsOf(orders.stream().map(Order::key).toList());
    long checked = System.nanoTime();

    // ---- 5. exact counts in the database of the run, with the service stopped
    second.stop();
    Snapshot after;
    try (Connection c = connect()) {
      after = snapshot(c);
      assertThat(count(c, "SELECT COUNT(*) FROM pay_payment")).isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM pay_payment WHERE status = 'captured'")).isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(DISTINCT account_id) FROM pay_payment")).isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM pay_provider_charge")).isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(DISTINCT account_id) FROM pay_provider_charge")).isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM pay_payment p JOIN pay_provider_charge c"
          + " ON c.id = p.provider_charge_id AND c.account_id = p.account_id AND c.amount = p.amount"))
          .as("payments whose provider charge is the one the provider made for them").isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM pay_ledger_entry")).isEqualTo(2L * ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM pay_ledger_entry e JOIN pay_payment p ON p.id = e.reference_id"
          + " AND e.reference_type = 'payment' AND e.amount = p.amount")).isEqualTo(2L * ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM (SELECT reference_id FROM pay_ledger_entry"
          + " GROUP BY reference_id HAVING COUNT(*) <> 2 OR COUNT(DISTINCT direction) <> 2) x")).isZero();
      assertThat(count(c, "SELECT COUNT(*) FROM idem_record")).isEqualTo(ORDERS);
      assertThat(count(c, "SELECT COUNT(*) FROM idem_record WHERE state <> 'completed'")).isZero();
    }

    long resumedByRetry = inProgressAtKill.stream().filter(k -> !leftToCompleter.contains(k))
        .filter(k -> "stored".equals(finals.get(k).reply().header("Idempotency-Status"))).count();
    long inProgressAnswers = finals.values().stream().mapToLong(Final::inProgressAnswers).sum();
    System.out.printf("[%s] after the restart: of the %d records left in progress, %d resumed by the client's retry"
            + " and %d by the completer (%d of them left to it); %d in-progress answers waited out; provider"
            + " duplicate charge attempts %d; database %s%n"
            + "[%s] timings: first start %d ms, sending to kill %d ms, restart %d ms, immediate retries %d ms,"
            + " completer window %d ms, checks %d ms, total %d ms%n",
        databaseName(), inProgressAtKill.size(), resumedByRetry, inProgressAtKill.size() - resumedByRetry,
        leftToCompleter.size(), inProgressAnswers, stats.path("duplicate_charge_attempts").asLong(), after.counts(),
        databaseName(), millis(t0, started), millis(started, killedAt), millis(killedAt, restarted),
        millis(restarted, retriedFirst), millis(retriedFirst, completerDone), millis(retriedAll, checked),
        millis(t0, System.nanoTime()));
  }

  // ---------------------------------------------------------------- the client side

  /** One payment: its key, its account, and the body it is always sent with. */
  record Order(int index, String key, String account, long amount) {
    String body() {
      return "{\"account_id\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\","
          + "\"description\":\"kill -9 order " + index + "\"}";
    }
  }

  /** An answer as the client saw it. */
  record Reply(int status, HttpHeaders headers, byte[] body) {
    JsonNode json() {
      return JSON.readTree(body);
    }

    String header(String name) {
      return headers.firstValue(name).orElse(null);
    }

    @Override
    public String toString() {
      return status + " " + new String(body, StandardCharsets.UTF_8);
    }
  }

  /** The final answer for a key, and how it was reached. */
  record Final(Reply reply, int attempts, int inProgressAnswers) {}

  /** What the database holds: counts by kind, and the keys of the records in progress. */
  record Snapshot(Map<String, Long> counts, Set<String> inProgressKeys) {}

  private ServiceProcess start(String name) throws IOException {
    List<String> args = new ArrayList<>(datasourceArgs());
    args.addAll(SERVICE_ARGS);
    args.add("--payments.api-keys." + apiKey + "=" + tenant);
    // The child's own log is the record of what it did: keep Idem's INFO lines (completer, recoveries).
    ServiceProcess child = ServiceProcess.start(dir, name, args, STARTUP);
    children.add(child);
    return child;
  }

  private static HttpClient client() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  private Reply pay(HttpClient http, ServiceProcess service, Order o) throws IOException {
    HttpRequest request = HttpRequest.newBuilder(service.uri("/payments")).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + apiKey)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", o.key())
        .POST(HttpRequest.BodyPublishers.ofString(o.body(), StandardCharsets.UTF_8)).build();
    return send(http, request);
  }

  /** Retries the orders concurrently, each until its answer is final; the final answers by key. */
  private Map<String, Final> retryAll(HttpClient http, ServiceProcess service, List<Order> orders, long deadline)
      throws InterruptedException {
    Map<String, Final> finals = new LinkedHashMap<>();
    ExecutorService retriers = Executors.newFixedThreadPool(SENDERS);
    try {
      List<Future<Final>> retried = new ArrayList<>();
      for (Order o : orders) {
        retried.add(retriers.submit(() -> retryUntilFinal(http, service, o, deadline)));
      }
      for (int i = 0; i < orders.size(); i++) {
        try {
          finals.put(orders.get(i).key(), retried.get(i).get());
        } catch (ExecutionException e) {
          throw e.getCause() instanceof AssertionError ? (AssertionError) e.getCause()
              : new AssertionError("retrying " + orders.get(i) + " failed: " + e.getCause(), e.getCause());
        }
      }
    } finally {
      retriers.shutdownNow();
    }
    return finals;
  }

  /**
   * Posts the order until the answer is final: anything but a 409 in progress or a retryable 503/504, which are
   * retried after their {@code Retry-After} (at most {@link #MAX_RETRY_AFTER}), until {@code deadline}.
   */
  private Final retryUntilFinal(HttpClient http, ServiceProcess service, Order o, long deadline) throws IOException {
    List<String> history = new ArrayList<>();
    int inProgress = 0;
    while (true) {
      Reply r = pay(http, service, o);
      String code = r.status() >= 400 ? r.json().path("code").asString() : "";
      boolean wait = (r.status() == 409 && "CONFLICT.idempotency.in_progress".equals(code))
          || ((r.status() == 503 || r.status() == 504) && r.json().path("retryable").asBoolean());
      if (!wait) {
        return new Final(r, history.size() + 1, inProgress);
      }
      if (r.status() == 409) {
        inProgress++;
      }
      history.add(r.status() + " " + code + " Retry-After " + r.header("Retry-After"));
      Duration retryAfter = retryAfter(r);
      if (System.nanoTime() + retryAfter.toNanos() - deadline > 0) {
        throw new AssertionError("no final answer for " + o + " within " + RETRY_DEADLINE + " of the restart;"
            + " answers: " + history);
      }
      LockSupport.parkNanos(retryAfter.toNanos());
    }
  }

  private static Duration retryAfter(Reply r) {
    String header = r.header("Retry-After");
    long seconds = 1;
    if (header != null) {
      try {
        seconds = Long.parseLong(header.trim());
      } catch (NumberFormatException e) {
        throw new AssertionError("Retry-After is not a number of seconds: " + r.headers().map(), e);
      }
    }
    Duration d = Duration.ofSeconds(Math.max(0, seconds));
    return d.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : d;
  }

  private JsonNode getJson(HttpClient http, ServiceProcess service, String pathAndQuery) {
    HttpRequest request = HttpRequest.newBuilder(service.uri(pathAndQuery)).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + apiKey).GET().build();
    try {
      Reply r = send(http, request);
      assertThat(r.status()).as("GET " + pathAndQuery + ": " + r).isEqualTo(200);
      return r.json();
    } catch (IOException e) {
      throw new AssertionError("GET " + pathAndQuery + " failed: " + e, e);
    }
  }

  private static Reply send(HttpClient http, HttpRequest request) throws IOException {
    try {
      HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      return new Reply(r.statusCode(), r.headers(), r.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** Polls {@code probe} until {@code done} holds or {@code deadline} passes; the deadline is a bound only. */
  private static JsonNode awaitJson(String what, Duration deadline, Supplier<JsonNode> probe,
      Predicate<JsonNode> done) {
    long end = System.nanoTime() + deadline.toNanos();
    JsonNode last = probe.get();
    while (!done.test(last)) {
      if (System.nanoTime() - end > 0) {
        throw new AssertionError("within " + deadline + ": " + what + "; last seen: " + last);
      }
      LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
      last = probe.get();
    }
    return last;
  }

  // ---------------------------------------------------------------- the database side

  /** Counts that describe the state of the database: records by state and recovery point, payments, charges. */
  private static Snapshot snapshot(Connection c) throws SQLException {
    Set<String> inProgress = new HashSet<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT idem_key FROM idem_record WHERE state = 'in_progress'");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        inProgress.add(rs.getString(1));
      }
    }
    Map<String, Long> out = new LinkedHashMap<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT state, recovery_point, COUNT(*) FROM idem_record"
        + " GROUP BY state, recovery_point ORDER BY state, recovery_point");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.put("records " + rs.getString(1) + (rs.getString(2) == null ? "" : "@" + rs.getString(2)),
            rs.getLong(3));
      }
    }
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT status, COUNT(*) FROM pay_payment GROUP BY status ORDER BY status");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.put("payments " + rs.getString(1), rs.getLong(2));
      }
    }
    out.put("provider charges", count(c, "SELECT COUNT(*) FROM pay_provider_charge"));
    out.put("charged, not captured", count(c, "SELECT COUNT(*) FROM pay_provider_charge c WHERE NOT EXISTS"
        + " (SELECT 1 FROM pay_payment p WHERE p.provider_charge_id = c.id)"));
    out.put("ledger entries", count(c, "SELECT COUNT(*) FROM pay_ledger_entry"));
    return new Snapshot(out, inProgress);
  }

  static long count(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getLong(1);
    }
  }

  private static long millis(long from, long to) {
    return TimeUnit.NANOSECONDS.toMillis(to - from);
  }
}
