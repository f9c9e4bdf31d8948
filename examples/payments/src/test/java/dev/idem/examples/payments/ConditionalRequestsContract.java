package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.servlet.conditional.ETag;
import dev.idem.test.Eventually;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Conditional requests of the payments service (ETag, If-Match, If-None-Match), over real HTTP, mixed into
 * {@link PaymentsServiceContract} so that they run on each database against the service that contract started.
 * Each test uses payments and accounts of its own.
 */
interface ConditionalRequestsContract {
  int ROUNDS = 200;
  Duration ROUND_TIMEOUT = Duration.ofSeconds(30);

  RunningService service();

  Caller firstTenant();

  Caller secondTenant();

  // ---------------------------------------------------------------- PATCH /payments/{id}

  @Test
  default void twoClientsPatchingWithOneETagHaveExactlyOneWinnerEveryRound() throws Exception {
    Caller alice = firstTenant();
    String id = newPayment(alice, 700);
    long start = versionOf(service().get("/payments/" + id, alice.apiKey()));
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      String etag = ETag.ofVersion(start).toString();
      String lastWinner = null;
      for (int round = 0; round < ROUNDS; round++) {
        CyclicBarrier barrier = new CyclicBarrier(2);
        List<Future<Answer>> calls = new ArrayList<>();
        for (int client = 0; client < 2; client++) {
          String description = "round " + round + " client " + client;
          String ifMatch = etag;
          calls.add(pool.submit(() -> {
            barrier.await(ROUND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return patch(alice, id, ifMatch, "{\"description\":\"" + description + "\"}");
          }));
        }
        List<Answer> answers = new ArrayList<>();
        for (Future<Answer> f : calls) {
          answers.add(f.get(ROUND_TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        }

        List<Answer> won = answers.stream().filter(a -> a.status() == 200).toList();
        List<Answer> lost = answers.stream().filter(a -> a.status() == 412).toList();
        assertThat(won).as("round %d: %s", round, answers).hasSize(1);
        assertThat(lost).as("round %d: %s", round, answers).hasSize(1);
        assertThat(lost.get(0).code()).isEqualTo("CONFLICT.precondition_failed");
        assertThat(versionOf(won.get(0))).as("round %d", round).isEqualTo(start + round + 1);
        etag = won.get(0).header("ETag");
        lastWinner = won.get(0).json().path("description").asString();
      }

      Answer last = service().get("/payments/" + id, alice.apiKey());
      assertThat(versionOf(last)).isEqualTo(start + ROUNDS);
      assertThat(last.json().path("description").asString()).isEqualTo(lastWinner);
      assertThat(service().count("SELECT version FROM pay_payment WHERE id = ?", id)).isEqualTo(start + ROUNDS);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  default void aPatchNeedsACurrentStrongETag() {
    Caller alice = firstTenant();
    String id = newPayment(alice, 800);
    Answer before = service().get("/payments/" + id, alice.apiKey());
    String etag = before.header("ETag");
    String body = "{\"description\":\"changed\",\"metadata\":{\"order\":\"o-17\"}}";

    Answer missing = patch(alice, id, null, body);
    Answer stale = patch(alice, id, ETag.ofVersion(versionOf(before) - 1).toString(), body);
    Answer weak = patch(alice, id, "W/" + etag, body);
    Answer malformed = patch(alice, id, "v1", body);
    Answer unchanged = service().get("/payments/" + id, alice.apiKey());
    Answer changed = patch(alice, id, etag, body);
    Answer replayed = patch(alice, id, etag, body);

    assertThat(missing.status()).as(missing.toString()).isEqualTo(428);
    assertThat(missing.code()).isEqualTo("VALIDATION.precondition_required");
    assertThat(missing.json().path("retryable").asBoolean()).isFalse();
    assertThat(stale.status()).as(stale.toString()).isEqualTo(412);
    assertThat(stale.code()).isEqualTo("CONFLICT.precondition_failed");
    assertThat(stale.json().path("retryable").asBoolean()).isFalse();
    assertThat(stale.header("ETag")).isEqualTo(etag);
    assertThat(weak.status()).as("If-Match uses strong comparison: %s", weak).isEqualTo(412);
    assertThat(malformed.status()).as(malformed.toString()).isEqualTo(400);
    assertThat(malformed.code()).isEqualTo("VALIDATION.precondition_malformed");
    assertThat(unchanged.header("ETag")).isEqualTo(etag);
    assertThat(unchanged.json().path("description").isNull()).isTrue();
    assertThat(changed.status()).as("no Idempotency-Key needed: %s", changed).isEqualTo(200);
    assertThat(versionOf(changed)).isEqualTo(versionOf(before) + 1);
    assertThat(changed.json().path("description").asString()).isEqualTo("changed");
    assertThat(changed.json().path("metadata").path("order").asString()).isEqualTo("o-17");
    assertThat(changed.json().path("amount").asLong()).isEqualTo(800);
    assertThat(replayed.status()).as("a retry after a success is refused, never applied twice").isEqualTo(412);
    assertThat(service().get("/payments/" + id, alice.apiKey()).header("ETag")).isEqualTo(changed.header("ETag"));
  }

  @Test
  default void aPatchIsValidatedAndScopedToTheTenant() {
    Caller alice = firstTenant();
    Caller bob = secondTenant();
    String id = newPayment(alice, 900);
    String etag = service().get("/payments/" + id, alice.apiKey()).header("ETag");

    Answer amount = patch(alice, id, etag, "{\"amount\":1}");
    Answer empty = patch(alice, id, etag, "{}");
    Answer badMetadata = patch(alice, id, etag, "{\"metadata\":{\"n\":1}}");
    Answer tooMany = patch(alice, id, etag, "{\"metadata\":{" + manyEntries(21) + "}}");
    Answer longDescription = patch(alice, id, etag, "{\"description\":\"" + "d".repeat(501) + "\"}");
    Answer bobReads = service().get("/payments/" + id, bob.apiKey());
    Answer bobPatches = patch(bob, id, etag, "{\"description\":\"bob was here\"}");
    Answer unknown = patch(alice, "pay_unknown_" + PaymentsServiceContract.suffix(), etag, "{\"description\":\"x\"}");
    Answer after = service().get("/payments/" + id, alice.apiKey());

    assertThat(amount.status()).isEqualTo(400);
    assertThat(amount.code()).isEqualTo("VALIDATION.amount");
    assertThat(empty.code()).isEqualTo("VALIDATION.body");
    assertThat(badMetadata.code()).isEqualTo("VALIDATION.metadata");
    assertThat(tooMany.code()).isEqualTo("VALIDATION.metadata");
    assertThat(longDescription.code()).isEqualTo("VALIDATION.description");
    assertThat(bobReads.status()).isEqualTo(404);
    assertThat(bobPatches.status()).isEqualTo(404);
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.code()).isEqualTo("NOT_FOUND.payment");
    assertThat(after.header("ETag")).isEqualTo(etag);
  }

  // ---------------------------------------------------------------- GET /payments/{id}

  @Test
  default void aGetAnswers304WhileTheClientsCopyIsCurrent() {
    Caller alice = firstTenant();
    String id = newPayment(alice, 1000);
    String etag = service().get("/payments/" + id, alice.apiKey()).header("ETag");

    Answer current = get(alice, "/payments/" + id, "If-None-Match", etag);
    Answer weakCurrent = get(alice, "/payments/" + id, "If-None-Match", "W/" + etag);
    Answer stale = get(alice, "/payments/" + id, "If-None-Match", "\"v0\"");

    assertThat(etag).matches("\"v[0-9]+\"");
    assertThat(current.status()).isEqualTo(304);
    assertThat(current.header("ETag")).isEqualTo(etag);
    assertThat(current.body()).isEmpty();
    assertThat(weakCurrent.status()).isEqualTo(304);
    assertThat(stale.status()).isEqualTo(200);
    assertThat(stale.json().path("id").asString()).isEqualTo(id);
  }

  @Test
  default void theETagChangesWhenARefundOrACaptureChangesThePayment() {
    Caller alice = firstTenant();
    String id = newPayment(alice, 1200);
    String captured = service().get("/payments/" + id, alice.apiKey()).header("ETag");

    Answer refund = service().post("/refunds", alice.apiKey(), PaymentsServiceContract.key(),
        "{\"payment_id\":\"" + id + "\",\"amount\":200}");
    String refunded = service().get("/payments/" + id, alice.apiKey()).header("ETag");
    Answer staleAfterRefund = patch(alice, id, captured, "{\"description\":\"late\"}");

    assertThat(refund.status()).as(refund.toString()).isEqualTo(201);
    assertThat(refunded).isNotEqualTo(captured);
    assertThat(staleAfterRefund.status()).isEqualTo(412);

    String account = PaymentsServiceContract.account("etag-capture");
    String key = PaymentsServiceContract.key();
    String body = PaymentsServiceContract.body(account, 300);
    Answer outage;
    try {
      assertThat(service().put("/admin/faults", null, "{\"provider_error_rate\":1}").status()).isEqualTo(200);
      outage = service().post("/payments", alice.apiKey(), key, body);
    } finally {
      service().put("/admin/faults", null, "{\"provider_error_rate\":0}");
    }
    String pendingId = outage.json().path("payment_id").asString();
    Answer pending = service().get("/payments/" + pendingId, alice.apiKey());
    Answer done = Eventually.await("a final answer for key " + key, PaymentsServiceContract.DEADLINE,
        () -> service().post("/payments", alice.apiKey(), key, body), a -> a.status() != 409 && a.status() < 500);
    Answer after = service().get("/payments/" + pendingId, alice.apiKey());

    assertThat(outage.status()).as(outage.toString()).isEqualTo(503);
    assertThat(pending.json().path("status").asString()).isEqualTo("pending");
    assertThat(done.status()).as(done.toString()).isEqualTo(201);
    assertThat(after.json().path("status").asString()).isEqualTo("captured");
    assertThat(versionOf(after)).isGreaterThan(versionOf(pending));
  }

  // ---------------------------------------------------------------- PUT /accounts/{id}

  @Test
  default void anAccountIsCreatedOnceWithIfNoneMatchStarAndReplacedWithIfMatch() {
    Caller alice = firstTenant();
    String id = "acct_" + PaymentsServiceContract.suffix();
    String ada = "{\"name\":\"Ada\",\"email\":\"ada@example.com\",\"metadata\":{\"tier\":\"gold\"}}";
    String grace = "{\"name\":\"Grace\",\"email\":\"grace@example.com\"}";

    Answer none = putAccount(alice, id, null, null, ada);
    Answer created = putAccount(alice, id, null, "*", ada);
    Answer again = putAccount(alice, id, null, "*", grace);
    Answer read = service().get("/accounts/" + id, alice.apiKey());
    Answer replaced = putAccount(alice, id, created.header("ETag"), null, grace);
    Answer stale = putAccount(alice, id, created.header("ETag"), null, ada);
    Answer weak = putAccount(alice, id, "W/" + replaced.header("ETag"), null, ada);
    Answer tagsOnly = putAccount(alice, id, null, "\"v9\"", ada);
    Answer invalid = putAccount(alice, id, replaced.header("ETag"), null, "{\"name\":\"\",\"email\":\"x\"}");
    Answer notThere = putAccount(alice, "acct_" + PaymentsServiceContract.suffix(), "\"v1\"", null, ada);
    Answer last = service().get("/accounts/" + id, alice.apiKey());

    assertThat(none.status()).as(none.toString()).isEqualTo(428);
    assertThat(none.code()).isEqualTo("VALIDATION.precondition_required");
    assertThat(created.status()).as(created.toString()).isEqualTo(201);
    assertThat(created.header("ETag")).isEqualTo("\"v1\"");
    assertThat(created.header("Location")).isEqualTo("/accounts/" + id);
    assertThat(again.status()).as(again.toString()).isEqualTo(412);
    assertThat(again.code()).isEqualTo("CONFLICT.precondition_failed");
    assertThat(read.header("ETag")).isEqualTo("\"v1\"");
    assertThat(read.json().path("name").asString()).isEqualTo("Ada");
    assertThat(read.json().path("metadata").path("tier").asString()).isEqualTo("gold");
    assertThat(replaced.status()).as(replaced.toString()).isEqualTo(200);
    assertThat(replaced.header("ETag")).isEqualTo("\"v2\"");
    assertThat(replaced.json().path("metadata").size()).isZero();
    assertThat(stale.status()).isEqualTo(412);
    assertThat(weak.status()).isEqualTo(412);
    assertThat(tagsOnly.status()).isEqualTo(428);
    assertThat(invalid.status()).isEqualTo(400);
    assertThat(notThere.status()).isEqualTo(412);
    assertThat(last.header("ETag")).isEqualTo("\"v2\"");
    assertThat(last.json().path("name").asString()).isEqualTo("Grace");
    assertThat(get(alice, "/accounts/" + id, "If-None-Match", "\"v2\"").status()).isEqualTo(304);
  }

  @Test
  default void concurrentCreatesOfOneAccountHaveOneWinner() throws Exception {
    Caller alice = firstTenant();
    for (int round = 0; round < 20; round++) {
      String id = "acct_race_" + PaymentsServiceContract.suffix();
      int r = round;

      List<Answer> answers = PaymentsServiceContract.concurrently(2, i -> putAccount(alice, id, null, "*",
          "{\"name\":\"client " + i + "\",\"email\":\"c" + i + "@example.com\"}"));

      assertThat(answers.stream().map(Answer::status).sorted().toList()).as("round %d: %s", r, answers)
          .containsExactly(201, 412);
    }
  }

  @Test
  default void anotherTenantCannotReadOrReplaceAnAccount() {
    Caller alice = firstTenant();
    Caller bob = secondTenant();
    String id = "acct_" + PaymentsServiceContract.suffix();
    Answer created = putAccount(alice, id, null, "*", "{\"name\":\"Alice\",\"email\":\"alice@example.com\"}");

    Answer bobReads = service().get("/accounts/" + id, bob.apiKey());
    Answer bobReplaces = putAccount(bob, id, created.header("ETag"), null,
        "{\"name\":\"Mallory\",\"email\":\"m@example.com\"}");
    Answer bobCreatesHisOwn = putAccount(bob, id, null, "*", "{\"name\":\"Bob\",\"email\":\"bob@example.com\"}");
    Answer alices = service().get("/accounts/" + id, alice.apiKey());
    Answer bobs = service().get("/accounts/" + id, bob.apiKey());

    assertThat(created.status()).isEqualTo(201);
    assertThat(bobReads.status()).isEqualTo(404);
    assertThat(bobReads.code()).isEqualTo("NOT_FOUND.account");
    assertThat(bobReplaces.status()).isEqualTo(412);
    assertThat(bobCreatesHisOwn.status()).isEqualTo(201);
    assertThat(alices.json().path("name").asString()).isEqualTo("Alice");
    assertThat(alices.header("ETag")).isEqualTo("\"v1\"");
    assertThat(bobs.json().path("name").asString()).isEqualTo("Bob");
  }

  // ---------------------------------------------------------------- helpers

  /** A captured payment of the caller; its id. */
  private String newPayment(Caller caller, long amount) {
    Answer paid = service().post("/payments", caller.apiKey(), PaymentsServiceContract.key(),
        PaymentsServiceContract.body(PaymentsServiceContract.account("conditional"), amount));
    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    return paid.json().path("id").asString();
  }

  private Answer patch(Caller caller, String id, String ifMatch, String json) {
    HttpRequest.Builder b = service().request("/payments/" + id, caller.apiKey())
        .header("Content-Type", "application/json")
        .method("PATCH", HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (ifMatch != null) {
      b.header("If-Match", ifMatch);
    }
    return service().send(b.build());
  }

  private Answer putAccount(Caller caller, String id, String ifMatch, String ifNoneMatch, String json) {
    HttpRequest.Builder b = service().request("/accounts/" + id, caller.apiKey())
        .header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (ifMatch != null) {
      b.header("If-Match", ifMatch);
    }
    if (ifNoneMatch != null) {
      b.header("If-None-Match", ifNoneMatch);
    }
    return service().send(b.build());
  }

  private Answer get(Caller caller, String path, String header, String value) {
    return service().send(service().request(path, caller.apiKey()).header(header, value).GET().build());
  }

  /** The version named by an answer's strong ETag. */
  private static long versionOf(Answer a) {
    assertThat(a.status()).as(a.toString()).isBetween(200, 299);
    return ETag.parse(a.header("ETag")).orElseThrow().version().orElseThrow();
  }

  private static String manyEntries(int n) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < n; i++) {
      out.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
    }
    return out.toString();
  }
}
