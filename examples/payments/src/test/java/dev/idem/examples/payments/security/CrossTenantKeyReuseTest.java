package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.RunningService;
import dev.idem.test.Eventually;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Security: an {@code Idempotency-Key} that one tenant used is a new, independent key for every other tenant, on
 * {@code POST /payments} and {@code POST /refunds}, in sequence and when the tenants race with it. The other tenant
 * never gets a replay ({@code Idempotency-Status: replayed}), a payload mismatch (which would tell it the key is taken)
 * or an in-progress conflict caused by the first tenant; it gets its own payment or refund, with its own id, account
 * and amount, that only it can read; and the provider charges once per tenant. Tenants whose names differ only in case
 * ({@code alice}, {@code Alice}) or that could collide with a naive {@code scope + separator + key}
 * ({@code alice} with key {@code x:K} against {@code alice:x} with key {@code K}) are distinct tenants too. Runs on an
 * H2 file database; {@link MariaDbCrossTenantKeyReuseTest} runs it on a case-insensitive MariaDB database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrossTenantKeyReuseTest {
  static final int SEQUENTIAL_ROUNDS = 200;
  static final int CONCURRENT_ROUNDS = 100;
  static final int REFUND_ROUNDS = 50;
  /** Requests per tenant in a concurrent round: the first use and duplicates racing it. */
  static final int PER_TENANT = 2;
  static final Duration DEADLINE = Duration.ofSeconds(60);
  static final List<String> SEPARATORS = List.of(":", "/", "|", ".", "#", "-");

  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  final Caller alice = new Caller("sk_sec_alice_" + run, "alice");
  final Caller bob = new Caller("sk_sec_bob_" + run, "bob");
  final Caller upperAlice = new Caller("sk_sec_upper_alice_" + run, "Alice");
  final Map<String, Caller> joined = new HashMap<>();
  RunningService service;
  /** Every payment and refund id each tenant was answered, across the tests. */
  private final Map<String, Set<String>> owned = new ConcurrentHashMap<>();

  @TempDir
  static Path data;

  /** The database arguments of this run. */
  List<String> database() {
    return List.of("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments")
        + ";WRITE_DELAY=0;AUTO_SERVER=FALSE");
  }

  @BeforeAll
  void start() {
    for (int i = 0; i < SEPARATORS.size(); i++) {
      joined.put(SEPARATORS.get(i), new Caller("sk_sec_joined_" + i + "_" + run, "alice" + SEPARATORS.get(i) + "x"));
    }
    List<String> args = new ArrayList<>(database());
    Stream.concat(Stream.of(alice, bob, upperAlice), joined.values().stream()).forEach(c -> args.add(c.argument()));
    args.add("--idem.completer.interval=200ms");
    args.add("--payments.outbox.poll-interval=50ms");
    service = RunningService.start(args.toArray(String[]::new));
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void aKeyReusedByAnotherTenantInSequenceIsItsOwnPayment() {
    long chargesBefore = charges();

    for (int round = 0; round < SEQUENTIAL_ROUNDS; round++) {
      Caller first = round % 4 < 2 ? alice : round % 4 == 2 ? bob : upperAlice;
      Caller second = first == alice ? (round % 2 == 0 ? bob : upperAlice) : alice;
      boolean sameBody = round % 3 != 0;
      String key = round % 5 == 0 ? "order-" + round : UUID.randomUUID().toString();
      String account = "acct_seq_" + run + "_" + round;
      long amount = 100 + round;
      String otherAccount = sameBody ? account : account + "_other";
      long otherAmount = sameBody ? amount : amount + 1;

      Answer firstAnswer = pay(first, key, account, amount);
      Answer secondAnswer = pay(second, key, otherAccount, otherAmount);
      Answer firstAgain = pay(first, key, account, amount);
      Answer secondAgain = pay(second, key, otherAccount, otherAmount);

      String what = "round " + round + ": " + first.tenant() + " then " + second.tenant() + " with key " + key;
      assertStoredFor(first, firstAnswer, account, amount, what);
      assertStoredFor(second, secondAnswer, otherAccount, otherAmount, what);
      assertThat(secondAnswer.json().path("id").asString()).as(what)
          .isNotEqualTo(firstAnswer.json().path("id").asString());
      assertReplayOf(firstAnswer, firstAgain, what);
      assertReplayOf(secondAnswer, secondAgain, what);
      assertReadableOnlyBy(first, firstAnswer.json().path("id").asString(), "/payments/", second);
      assertReadableOnlyBy(second, secondAnswer.json().path("id").asString(), "/payments/", first);
    }

    assertThat(charges() - chargesBefore).as("one charge per tenant and round").isEqualTo(2L * SEQUENTIAL_ROUNDS);
    assertNoIdShared();
  }

  @Test
  void tenantsRacingWithOneKeyEachGetTheirOwnPayment() throws Exception {
    long chargesBefore = charges();
    ExecutorService pool = Executors.newFixedThreadPool(2 * PER_TENANT);
    try {
      for (int round = 0; round < CONCURRENT_ROUNDS; round++) {
        Caller other = round % 2 == 0 ? bob : upperAlice;
        String key = UUID.randomUUID().toString();
        boolean sameBody = round % 2 == 0;
        String account = "acct_race_" + run + "_" + round;
        String otherAccount = sameBody ? account : account + "_other";
        List<Caller> callers = new ArrayList<>();
        for (int i = 0; i < PER_TENANT; i++) {
          callers.add(alice);
          callers.add(other);
        }

        List<Answer> answers = race(pool, callers, c -> pay(c, key, c == alice ? account : otherAccount, 500));

        String what = "round " + round + ", key " + key + " raced by alice and " + other.tenant();
        Map<Caller, String> paymentOf = new HashMap<>();
        for (int i = 0; i < answers.size(); i++) {
          Caller caller = callers.get(i);
          Answer a = answers.get(i);
          String expectedAccount = caller == alice ? account : otherAccount;
          if (a.status() == 409) {
            assertThat(a.code()).as(what + ": " + a).isEqualTo("CONFLICT.idempotency.in_progress");
            a = Eventually.await(what + " final for " + caller.tenant(), DEADLINE,
                () -> pay(caller, key, expectedAccount, 500), r -> r.status() != 409);
          }
          assertOwnPayment(caller, a, expectedAccount, 500, what);
          String previous = paymentOf.putIfAbsent(caller, a.json().path("id").asString());
          if (previous != null) {
            assertThat(a.json().path("id").asString()).as(what + ": one payment per tenant").isEqualTo(previous);
          }
        }
        for (Caller c : List.of(alice, other)) {
          List<String> statuses = new ArrayList<>();
          for (int i = 0; i < answers.size(); i++) {
            if (callers.get(i) == c) {
              statuses.add(String.valueOf(answers.get(i).header("Idempotency-Status")));
            }
          }
          assertThat(statuses).as(what + ": " + c.tenant() + " stored once, its duplicates replayed or refused")
              .containsOnlyOnce("stored").allMatch(s -> s.equals("stored") || s.equals("replayed")
                  || s.equals("null"));
        }
        assertThat(paymentOf.get(alice)).as(what).isNotEqualTo(paymentOf.get(other));
        assertReadableOnlyBy(alice, paymentOf.get(alice), "/payments/", other);
        assertReadableOnlyBy(other, paymentOf.get(other), "/payments/", alice);
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    assertThat(charges() - chargesBefore).as("one charge per tenant and round").isEqualTo(2L * CONCURRENT_ROUNDS);
    assertNoIdShared();
  }

  @Test
  void aRefundKeyReusedByAnotherTenantIsItsOwnRefundOrA404() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < REFUND_ROUNDS; round++) {
        String alicesPayment = paid(alice, "acct_rf_" + run + "_a" + round, 1000);
        String bobsPayment = paid(bob, "acct_rf_" + run + "_b" + round, 1000);
        String sequentialKey = UUID.randomUUID().toString();
        String racedKey = UUID.randomUUID().toString();
        String foreignKey = UUID.randomUUID().toString();

        Answer alicesRefund = refund(alice, sequentialKey, alicesPayment, 100 + round);
        Answer bobsRefund = refund(bob, sequentialKey, bobsPayment, 200 + round);
        List<Answer> raced = race(pool, List.of(alice, bob), c -> refund(c, racedKey,
            c == alice ? alicesPayment : bobsPayment, c == alice ? 300 : 400));
        Answer alicesOwn = refund(alice, foreignKey, alicesPayment, 50);
        Answer bobOnAlicesPayment = refund(bob, foreignKey, alicesPayment, 50);

        String what = "refund round " + round;
        assertOwnRefund(alice, alicesRefund, alicesPayment, 100 + round, what);
        assertOwnRefund(bob, bobsRefund, bobsPayment, 200 + round, what);
        assertOwnRefund(alice, raced.get(0), alicesPayment, 300, what + " (raced)");
        assertOwnRefund(bob, raced.get(1), bobsPayment, 400, what + " (raced)");
        assertOwnRefund(alice, alicesOwn, alicesPayment, 50, what);
        assertThat(bobOnAlicesPayment.status()).as(what + ": " + bobOnAlicesPayment).isEqualTo(404);
        assertThat(bobOnAlicesPayment.code()).isEqualTo("NOT_FOUND.payment");
        assertThat(bobOnAlicesPayment.header("Idempotency-Status")).isEqualTo("stored");
        assertThat(bobOnAlicesPayment.text()).doesNotContain(alicesOwn.json().path("id").asString());
        for (Answer r : List.of(alicesRefund, raced.get(0), alicesOwn)) {
          assertReadableOnlyBy(alice, r.json().path("id").asString(), "/refunds/", bob);
        }
        for (Answer r : List.of(bobsRefund, raced.get(1))) {
          assertReadableOnlyBy(bob, r.json().path("id").asString(), "/refunds/", alice);
        }
        assertThat(refundedAmount(alice, alicesPayment)).as(what).isEqualTo(100 + round + 300 + 50);
        assertThat(refundedAmount(bob, bobsPayment)).as(what).isEqualTo(200 + round + 400);
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
    assertNoIdShared();
  }

  @Test
  void aScopeAndAKeyNeverJoinIntoAnotherTenantsScopeAndKey() {
    for (String separator : SEPARATORS) {
      Caller joinedTenant = joined.get(separator);
      for (int round = 0; round < 10; round++) {
        String key = UUID.randomUUID().toString();
        String account = "acct_join_" + run + "_" + SEPARATORS.indexOf(separator) + "_" + round;

        Answer plain = pay(alice, "x" + separator + key, account, 700);
        Answer other = pay(joinedTenant, key, account, 700);

        String what = "alice with key x" + separator + key + ", then " + joinedTenant.tenant() + " with key " + key;
        assertStoredFor(alice, plain, account, 700, what);
        assertStoredFor(joinedTenant, other, account, 700, what);
        assertReadableOnlyBy(joinedTenant, other.json().path("id").asString(), "/payments/", alice);
      }
    }
    assertNoIdShared();
  }

  // ---------------------------------------------------------------- assertions

  /** The first use of the key by this caller: stored now, its own new payment, never a replay. */
  private void assertStoredFor(Caller caller, Answer answer, String account, long amount, String what) {
    assertThat(answer.header("Idempotency-Status")).as(what + ", " + caller.tenant() + ": " + answer)
        .isEqualTo("stored");
    assertThat(answer.header("Idempotent-Replayed")).as(what).isNull();
    assertOwnPayment(caller, answer, account, amount, what);
  }

  /** A payment answer (first or replayed) that belongs to this caller and describes what it sent. */
  private void assertOwnPayment(Caller caller, Answer answer, String account, long amount, String what) {
    assertThat(answer.status()).as(what + ", " + caller.tenant() + ": " + answer).isEqualTo(201);
    JsonNode payment = answer.json();
    assertThat(payment.path("account_id").asString()).as(what).isEqualTo(account);
    assertThat(payment.path("amount").asLong()).as(what).isEqualTo(amount);
    String location = answer.header("Location");
    if (location != null) {
      assertThat(location).as(what).endsWith(payment.path("id").asString());
    }
    own(caller, payment.path("id").asString());
  }

  private void assertOwnRefund(Caller caller, Answer answer, String paymentId, long amount, String what) {
    assertThat(answer.status()).as(what + ", " + caller.tenant() + ": " + answer).isEqualTo(201);
    assertThat(answer.header("Idempotency-Status")).as(what).isEqualTo("stored");
    assertThat(answer.header("Idempotent-Replayed")).as(what).isNull();
    JsonNode refund = answer.json();
    assertThat(refund.path("payment_id").asString()).as(what).isEqualTo(paymentId);
    assertThat(refund.path("amount").asLong()).as(what).isEqualTo(amount);
    own(caller, refund.path("id").asString());
  }

  private static void assertReplayOf(Answer first, Answer again, String what) {
    assertThat(again.header("Idempotency-Status")).as(what + ": " + again).isEqualTo("replayed");
    assertThat(again.body()).as(what).isEqualTo(first.body());
  }

  private void assertReadableOnlyBy(Caller owner, String id, String collection, Caller other) {
    assertThat(service.get(collection + id, owner.apiKey()).status()).as(owner.tenant() + " reads " + id)
        .isEqualTo(200);
    Answer foreign = service.get(collection + id, other.apiKey());
    assertThat(foreign.status()).as(other.tenant() + " reads " + owner.tenant() + "'s " + id).isEqualTo(404);
  }

  private void own(Caller caller, String id) {
    assertThat(id).isNotEmpty();
    owned.computeIfAbsent(caller.tenant(), t -> ConcurrentHashMap.newKeySet()).add(id);
  }

  /** No id was ever answered to two tenants. */
  private void assertNoIdShared() {
    Map<String, String> ownerOf = new HashMap<>();
    owned.forEach((tenant, ids) -> ids.forEach(id -> {
      String previous = ownerOf.putIfAbsent(id, tenant);
      assertThat(previous).as(id + " answered to " + tenant + " and to " + previous).isNull();
    }));
  }

  // ---------------------------------------------------------------- requests

  private Answer pay(Caller caller, String key, String account, long amount) {
    return service.post("/payments", caller.apiKey(), key,
        "{\"account_id\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}");
  }

  private Answer refund(Caller caller, String key, String paymentId, long amount) {
    return service.post("/refunds", caller.apiKey(), key,
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":" + amount + "}");
  }

  private String paid(Caller caller, String account, long amount) {
    Answer a = pay(caller, UUID.randomUUID().toString(), account, amount);
    assertThat(a.status()).as(a.toString()).isEqualTo(201);
    return a.json().path("id").asString();
  }

  private long refundedAmount(Caller caller, String paymentId) {
    return service.get("/payments/" + paymentId, caller.apiKey()).json().path("refunded_amount").asLong();
  }

  private long charges() {
    return service.get("/admin/provider/stats", null).json().path("charges").asLong();
  }

  interface Call {
    Answer run(Caller caller);
  }

  /** One call per caller, each on its own thread, released together by a barrier; the answers in callers' order. */
  private static List<Answer> race(ExecutorService pool, List<Caller> callers, Call call) throws Exception {
    CyclicBarrier barrier = new CyclicBarrier(callers.size());
    List<Future<Answer>> futures = new ArrayList<>();
    for (Caller c : callers) {
      futures.add(pool.submit(() -> {
        barrier.await(30, TimeUnit.SECONDS);
        return call.run(c);
      }));
    }
    List<Answer> answers = new ArrayList<>();
    for (Future<Answer> f : futures) {
      answers.add(f.get(120, TimeUnit.SECONDS));
    }
    return answers;
  }
}
