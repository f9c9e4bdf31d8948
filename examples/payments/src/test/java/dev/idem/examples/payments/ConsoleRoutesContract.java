package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;

/**
 * The operator console (idem-console, mounted at {@code /console}) over plain HTTP: its files and their headers, the
 * admin key on its API (also from loopback, where the other admin routes are open), the key search, the eviction and
 * its guards, and the metrics summary. One subclass per database ({@link ConsoleRoutesTest} on H2,
 * {@link ConsolePostgresRoutesTest}, {@link ConsoleMariaDbRoutesTest}): the key search is SQL of its own.
 * {@link ConsoleBrowserTest} drives the page.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConsoleRoutesContract {
  static final String ADMIN_KEY = "sk_admin";
  private static final Caller ALICE = new Caller("sk_test_alice", "alice");
  private static final Pattern INLINE_SCRIPT = Pattern.compile("<script(?![^>]*\\bsrc=)|\\son[a-z]+\\s*=");

  private static final String OPERATION = "POST /payments";
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  /** Long enough to look at the record while the payment runs, well under the default lease of 30 s. */
  private static final long PROVIDER_LATENCY_MS = 4000;

  /** Started by the subclass's {@code @BeforeAll}, on its database. */
  RunningService service;

  // ---------------------------------------------------------------- the page

  @Test
  void thePageLoadsWithoutCredentialsUnderAStrictContentSecurityPolicy() {
    Answer redirect = service.get("/console", null);
    Answer page = service.get("/console/", null);
    Answer script = service.get("/console/console.js", null);
    Answer style = service.get("/console/console.css", null);
    Answer missing = service.get("/console/secrets.txt", null);
    Answer post = service.post("/console/", null, null, "");

    assertThat(redirect.status()).isEqualTo(302);
    assertThat(redirect.header("Location")).isEqualTo("/console/");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.contentType()).startsWith("text/html");
    assertThat(page.text()).contains("<script src=\"console.js\" defer></script>");
    assertThat(INLINE_SCRIPT.matcher(page.text()).find()).as("no inline script or event handler").isFalse();
    assertThat(script.contentType()).startsWith("text/javascript");
    assertThat(script.text()).doesNotContain("innerHTML", "outerHTML", "insertAdjacentHTML", "eval(");
    assertThat(style.contentType()).startsWith("text/css");
    for (Answer a : List.of(redirect, page, script, style)) {
      assertThat(a.header("Cache-Control")).isEqualTo("no-store");
      assertThat(a.header("X-Content-Type-Options")).isEqualTo("nosniff");
      assertThat(a.header("Content-Security-Policy")).contains("default-src 'none'", "script-src 'self'",
          "frame-ancestors 'none'").doesNotContain("unsafe-inline", "unsafe-eval");
    }
    assertThat(missing.status()).isEqualTo(404);
    assertThat(post.status()).isEqualTo(405);
    assertThat(post.header("Allow")).isEqualTo("GET, HEAD");
  }

  // ---------------------------------------------------------------- access

  @Test
  void theConsolesRoutesNeedTheAdminKeyEvenFromLoopback() {
    Answer none = service.get("/console/api/session", null);
    Answer tenant = service.get("/console/api/session", ALICE.apiKey());
    Answer wrong = service.get("/console/api/metrics", "sk_admin_wrong");
    Answer admin = service.get("/console/api/session", ADMIN_KEY);
    Answer outboxFromLoopback = service.get("/admin/outbox/stats", null);

    for (Answer a : List.of(none, tenant, wrong)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(401);
      assertThat(a.code()).isEqualTo("AUTH.unauthenticated");
      assertThat(a.header("WWW-Authenticate")).startsWith("Bearer");
    }
    assertThat(admin.status()).isEqualTo(200);
    assertThat(admin.json().path("operator").asString()).isEqualTo("admin");
    assertThat(admin.header("Cache-Control")).isEqualTo("no-store");
    assertThat(outboxFromLoopback.status()).as("the other admin routes keep the loopback exemption").isEqualTo(200);
  }

  // ---------------------------------------------------------------- records

  @Test
  void recordsAreFoundByAPartOfTheirKeyInEveryScopeAndState() {
    String tag = suffix();
    String aliceKey = "order-" + tag + "-alice";
    String bobKey = "order-" + tag + "-bob";
    pay(ALICE, aliceKey, 100);
    pay(new Caller("sk_test_bob", "bob"), bobKey, 200);

    JsonNode any = records("state=any&key=" + tag);
    JsonNode completed = records("state=completed&key=" + tag);
    JsonNode inProgress = records("state=in_progress&key=" + tag);
    JsonNode exact = records("state=any&key=" + aliceKey);

    assertThat(keys(any)).containsExactly(aliceKey, bobKey);
    assertThat(any.path("records").get(0).path("scope").asString()).isEqualTo("alice");
    assertThat(any.path("records").get(1).path("scope").asString()).isEqualTo("bob");
    assertThat(any.path("records").get(0).path("operation").asString()).isEqualTo("POST /payments");
    assertThat(any.path("records").get(0).path("response_status").asInt()).isEqualTo(201);
    assertThat(any.path("records").get(0).path("age_ms").asLong()).isNotNegative();
    assertThat(any.path("records").get(0).path("lease_age_ms").isNull()).as("only in-progress records").isTrue();
    assertThat(keys(completed)).containsExactly(aliceKey, bobKey);
    assertThat(keys(inProgress)).isEmpty();
    assertThat(keys(exact)).containsExactly(aliceKey);
  }

  @Test
  void aKeySearchTakesWildcardsLiterally() {
    String tag = suffix();
    String literal = "pct-" + tag + "-100%_off!";
    String other = "pct-" + tag + "-100xyoff";
    pay(ALICE, literal, 100);
    pay(ALICE, other, 100);

    JsonNode found = records("state=any&key=" + encode("100%_off!"));
    JsonNode wildcardOnly = records("state=any&key=" + encode(tag + "-100%"));
    JsonNode underscore = records("state=any&key=" + encode(tag + "-100_"));

    assertThat(keys(found)).containsExactly(literal);
    assertThat(keys(wildcardOnly)).containsExactly(literal);
    assertThat(keys(underscore)).isEmpty();
  }

  @Test
  void searchesAndListingsArePaged() {
    String tag = suffix();
    List<String> made = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      made.add("page-" + tag + "-" + i);
      pay(ALICE, made.get(i), 100 + i);
    }

    JsonNode first = records("state=any&limit=2&key=" + tag);
    JsonNode second = records("state=any&limit=2&key=" + tag + "&after=" + first.path("next").asString());
    JsonNode listed = records("state=completed&limit=1");

    assertThat(keys(first)).containsExactlyElementsOf(made.subList(0, 2));
    assertThat(keys(second)).containsExactly(made.get(2));
    assertThat(second.path("next").isNull()).isTrue();
    assertThat(listed.path("records").size()).isEqualTo(1);
    assertThat(listed.path("next").isNull()).as("more completed records than one").isFalse();
  }

  @Test
  void aSearchForAnythingButVisibleAsciiIs400() {
    for (String part : List.of("café", "two words", "tab\tbed", "emoji-\uD83D\uDE00", "\u00A0")) {
      Answer a = service.get("/console/api/records?state=any&key=" + encode(part), ADMIN_KEY);

      assertThat(a.status()).as("%s: %s", part, a).isEqualTo(400);
      assertThat(a.code()).isEqualTo("VALIDATION.key");
      assertThat(a.json().path("detail").asString()).contains("visible ASCII");
    }
    // a NUL is refused for every route before the console sees it (RequestTextFilter)
    assertThat(service.get("/console/api/records?state=any&key=" + encode("a\u0000b"), ADMIN_KEY).code())
        .isEqualTo("VALIDATION.query");
    assertThat(records("state=any&key=" + encode("!~")).path("records").isArray())
        .as("the edges of visible ASCII are searched").isTrue();
  }

  @Test
  void anEvictedRecordIsGoneAndItsKeyRunsAgain() {
    String key = "evict-" + suffix();
    Answer first = pay(ALICE, key, 300);
    JsonNode record = record(key);

    Answer evicted = evict(key, record.path("version").asLong(), false, ADMIN_KEY);
    Answer again = evict(key, record.path("version").asLong(), false, ADMIN_KEY);
    Answer byTenant = evict(key, record.path("version").asLong(), false, ALICE.apiKey());
    Answer rerun = pay(ALICE, key, 300);

    assertThat(record.path("state").asString()).isEqualTo("completed");
    assertThat(evicted.status()).as(evicted.toString()).isEqualTo(200);
    assertThat(evicted.json().path("evicted").asBoolean()).isTrue();
    assertThat(evicted.json().path("state").asString()).isEqualTo("completed");
    assertThat(evicted.json().path("forced").asBoolean()).isFalse();
    assertThat(again.status()).isEqualTo(404);
    assertThat(again.code()).isEqualTo("NOT_FOUND.idempotency_record");
    assertThat(byTenant.status()).isEqualTo(401);
    assertThat(rerun.header("Idempotency-Status")).as("no stored answer to replay").isEqualTo("stored");
    assertThat(rerun.json().path("id").asString()).isNotEqualTo(first.json().path("id").asString());
  }

  @Test
  void aRecordThatChangedSinceItWasShownIsNotEvicted() {
    String key = "stale-" + suffix();
    pay(ALICE, key, 300);
    long version = record(key).path("version").asLong();

    Answer older = evict(key, version - 1, false, ADMIN_KEY);
    Answer newer = evict(key, version + 1, true, ADMIN_KEY);

    for (Answer a : List.of(older, newer)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(409);
      assertThat(a.code()).isEqualTo("CONFLICT.record.changed");
      assertThat(a.json().path("version").asLong()).isEqualTo(version);
    }
    assertThat(record(key).path("version").asLong()).as("still there, unchanged").isEqualTo(version);
    assertThat(evict(key, version, false, ADMIN_KEY).status()).isEqualTo(200);
  }

  @Test
  void aRecordWhoseWorkerHoldsALiveLeaseIsEvictedOnlyWhenForced() {
    String key = "live-" + suffix();
    CompletableFuture<Answer> running;
    JsonNode record;
    Answer refused;
    Answer forced;
    assertThat(service.put("/admin/faults", ADMIN_KEY, "{\"provider_latency_ms\":" + PROVIDER_LATENCY_MS + "}")
        .status()).isEqualTo(200);
    try {
      running = CompletableFuture.supplyAsync(() -> service.post("/payments", ALICE.apiKey(), key,
          "{\"account_id\":\"acct_console\",\"amount\":700,\"currency\":\"EUR\"}"));
      record = Eventually.await("the record of " + key + " in progress", DEADLINE,
          () -> records("state=in_progress&key=" + key).path("records"), r -> r.size() == 1).get(0);
      refused = evict(key, record.path("version").asLong(), false, ADMIN_KEY);
      forced = evict(key, record.path("version").asLong(), true, ADMIN_KEY);
    } finally {
      service.put("/admin/faults", ADMIN_KEY, "{\"provider_latency_ms\":0}");
    }
    Answer answered = running.join();

    assertThat(record.path("lease_left_ms").asLong()).as("the lease is live").isPositive();
    assertThat(refused.status()).as(refused.toString()).isEqualTo(409);
    assertThat(refused.code()).isEqualTo("CONFLICT.record.lease_live");
    assertThat(refused.json().path("lease_left_ms").asLong()).isPositive();
    assertThat(forced.status()).as(forced.toString()).isEqualTo(200);
    assertThat(forced.json().path("state").asString()).isEqualTo("in_progress");
    assertThat(forced.json().path("forced").asBoolean()).isTrue();
    assertThat(answered.status()).as("the worker ran to its end: %s", answered).isPositive();
  }

  @Test
  void badQueriesAre400() {
    assertThat(service.get("/console/api/records?state=lost", ADMIN_KEY).code()).isEqualTo("VALIDATION.state");
    assertThat(service.get("/console/api/records?limit=0", ADMIN_KEY).code()).isEqualTo("VALIDATION.limit");
    assertThat(service.get("/console/api/records?limit=201", ADMIN_KEY).code()).isEqualTo("VALIDATION.limit");
    assertThat(service.get("/console/api/records?after=%21%21", ADMIN_KEY).code()).isEqualTo("VALIDATION.after");
    assertThat(service.get("/console/api/records?key=" + "k".repeat(256), ADMIN_KEY).code())
        .isEqualTo("VALIDATION.key");
    String record = "/console/api/records?scope=alice&operation=" + encode(OPERATION);
    assertThat(delete(record + "&version=1&key=" + encode("bad key"), ADMIN_KEY).code()).isEqualTo("VALIDATION.key");
    assertThat(delete(record + "&version=one&key=k", ADMIN_KEY).code()).isEqualTo("VALIDATION.version");
    assertThat(delete(record + "&version=1&force=yes&key=k", ADMIN_KEY).code()).isEqualTo("VALIDATION.force");
    assertThat(delete(record + "&key=k", ADMIN_KEY).status()).as("the version is required").isEqualTo(400);
    assertThat(delete("/console/api/records?scope=alice", ADMIN_KEY).status()).isEqualTo(400);
  }

  // ---------------------------------------------------------------- metrics

  @Test
  void theMetricsCountOutcomesAndKeyAgesAtReplay() {
    JsonNode before = metrics();
    String key = "metrics-" + suffix();
    pay(ALICE, key, 100);
    Answer replayed = pay(ALICE, key, 100);
    Answer mismatch = pay(ALICE, key, 101);

    JsonNode after = metrics();

    assertThat(replayed.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(mismatch.status()).isEqualTo(422);
    assertThat(delta(before, after, "created")).isGreaterThanOrEqualTo(1);
    assertThat(delta(before, after, "replayed")).isGreaterThanOrEqualTo(1);
    assertThat(delta(before, after, "mismatch")).isGreaterThanOrEqualTo(1);
    assertThat(after.path("requests").has("in_progress")).isTrue();
    assertThat(after.path("at").asLong()).isGreaterThanOrEqualTo(before.path("at").asLong());
    JsonNode age = after.path("replay_key_age");
    long inBars = 0;
    for (JsonNode bar : age.path("buckets")) {
      inBars += bar.path("count").asLong();
    }
    assertThat(age.path("count").asLong()).isGreaterThanOrEqualTo(1);
    assertThat(inBars).as("every replay in one bar").isEqualTo(age.path("count").asLong());
    assertThat(age.path("buckets").get(0).path("le_seconds").asDouble()).isEqualTo(1.0);
    assertThat(age.path("buckets").get(age.path("buckets").size() - 1).path("le_seconds").isNull()).isTrue();
  }

  // ---------------------------------------------------------------- helpers

  private static String suffix() {
    return UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private Answer pay(Caller caller, String key, long amount) {
    Answer a = service.post("/payments", caller.apiKey(), key,
        "{\"account_id\":\"acct_console\",\"amount\":" + amount + ",\"currency\":\"EUR\"}");
    assertThat(a.status()).as(a.toString()).isIn(201, 422);
    return a;
  }

  private Answer delete(String path, String key) {
    return service.send(service.request(path, key).header("X-Idem-Console", "1").DELETE().build());
  }

  private Answer evict(String key, long version, boolean force, String apiKey) {
    return delete("/console/api/records?scope=" + ALICE.tenant() + "&operation=" + encode(OPERATION) + "&key="
        + encode(key) + "&version=" + version + (force ? "&force=true" : ""), apiKey);
  }

  /** Alice's record of the key, as the listing shows it. */
  private JsonNode record(String key) {
    JsonNode found = records("state=any&key=" + encode(key)).path("records");
    assertThat(found.size()).as("the record of " + key).isEqualTo(1);
    return found.get(0);
  }

  private JsonNode records(String query) {
    Answer a = service.get("/console/api/records?" + query, ADMIN_KEY);
    assertThat(a.status()).as(a.toString()).isEqualTo(200);
    return a.json();
  }

  private static List<String> keys(JsonNode page) {
    List<String> keys = new ArrayList<>();
    page.path("records").forEach(r -> keys.add(r.path("key").asString()));
    return keys;
  }

  private JsonNode metrics() {
    Answer a = service.get("/console/api/metrics", ADMIN_KEY);
    assertThat(a.status()).as(a.toString()).isEqualTo(200);
    return a.json();
  }

  private static long delta(JsonNode before, JsonNode after, String outcome) {
    return after.path("requests").path(outcome).asLong() - before.path("requests").path(outcome).asLong();
  }
}
