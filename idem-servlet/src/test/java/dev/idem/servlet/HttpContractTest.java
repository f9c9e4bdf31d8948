package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Scope;
import dev.idem.test.http.HttpContractKit;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every row of docs/architecture.md#http-contract, over real HTTP against embedded Jetty 12, on a real database: the
 * rows every server passes come from {@link HttpContractKit} (run here with 10 rounds of 32 concurrent requests), the
 * rest are this module's own. Each test uses fresh keys, so the tests share one service.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class HttpContractTest extends HttpContractKit {
  private TestService service;

  protected abstract String database();

  @BeforeAll
  void start() throws Exception {
    service = new TestService(database(), b -> b);
  }

  @AfterAll
  void stop() throws Exception {
    service.close();
  }

  @Override
  protected URI uri(String path) {
    return URI.create(service.url(path));
  }

  @Override
  protected HttpRequest.Builder asTenant(HttpRequest.Builder request, String tenant) {
    return request.header("Authorization", "Bearer " + tenant);
  }

  @Override
  protected String createPath() {
    return "/orders";
  }

  @Override
  protected int expectedCreatedStatus() {
    return 201;
  }

  @Override
  protected long effects(String tenant, String key) throws Exception {
    return service.orders(tenant, key);
  }

  @Override
  protected int raceThreads() {
    return 32;
  }

  @Override
  protected int raceRounds() {
    return 10;
  }

  @Override
  protected void checkStored(HttpResponse<byte[]> answer, String tenant, String key) {
    assertThat(answer.headers().firstValue("Set-Cookie")).isPresent();
    assertThat(answer.headers().firstValue("Location")).hasValueSatisfying(l -> assertThat(l)
        .startsWith("/orders/ord_"));
    assertThat(service.store.find(new RecordKey(Scope.of(tenant), Operation.of("POST /orders"),
        IdempotencyKey.of(key))).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  @Override
  protected void checkReplayed(HttpResponse<byte[]> first, HttpResponse<byte[]> replay) {
    assertThat(replay.headers().firstValue("Set-Cookie")).as("Set-Cookie is never kept").isEmpty();
    assertThat(replay.headers().firstValue("X-Trace")).as("headers off the allow-list are not kept").isEmpty();
  }

  private boolean recordExists(String tenant, String operation, String key) {
    return service.store.find(new RecordKey(Scope.of(tenant), Operation.of(operation), IdempotencyKey.of(key)))
        .isPresent();
  }

  // ------------------------------------------------------------------ key validation

  @Test
  void keyOptionalRouteRunsAsUsualWithoutAKey() throws Exception {
    HttpResponse<byte[]> r = post("/notes", "alice", null, "{\"item\":\"note\"}");

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.headers().firstValue("Idempotency-Status")).isEmpty();
  }

  @Test
  void keyWithATabIs400Invalid() throws Exception {
    String key = "abc\tdef" + UUID.randomUUID();

    String answer = rawPost("alice", List.of(key), "{\"item\":\"book\"}");

    assertThat(answer).startsWith("HTTP/1.1 400").contains("VALIDATION.idempotency_key_invalid")
        .doesNotContain(key);
  }

  /** Jetty's parser refuses control characters other than tab in any header before a filter runs. */
  @Test
  void keyWithAControlCharacterIsRefusedWith400BeforeAnythingRuns() throws Exception {
    String key = "abc\u0001def" + UUID.randomUUID();

    String answer = rawPost("alice", List.of(key), "{\"item\":\"book\"}");

    assertThat(answer).startsWith("HTTP/1.1 400");
    assertThat(service.orders("alice", key)).isZero();
  }

  @Test
  void keyWithNonAsciiBytesIs400Invalid() throws Exception {
    assertThat(rawPost("alice", List.of("caf\u00e9-1"), "{}")).startsWith("HTTP/1.1 400")
        .contains("VALIDATION.idempotency_key_invalid");
  }

  @Test
  void twoKeyHeadersAre400InvalidAndNothingIsStored() throws Exception {
    String a = newKey();
    String b = newKey();

    String answer = rawPost("alice", List.of(a, b), "{\"item\":\"book\"}");

    assertThat(answer).startsWith("HTTP/1.1 400").contains("VALIDATION.idempotency_key_invalid", "exactly one");
    assertThat(service.orders("alice", a) + service.orders("alice", b)).isZero();
  }

  @Test
  void theUnauthenticatedAnswerCarriesTheKeyBack() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> r = post("/orders", null, key, "{\"item\":\"book\"}");

    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(text(r)).contains("\"code\":\"AUTH.unauthenticated\"");
    assertThat(r.headers().allValues("Idempotency-Key")).containsExactly(key);
    assertThat(r.headers().firstValue("Idempotency-Status")).isEmpty();
  }

  // ------------------------------------------------------------------ first request, replay, mismatch

  @Test
  void sameKeyOnAnotherQueryIsAMismatchAndReorderedParametersAreTheSameRequest() throws Exception {
    String key = newKey();
    HttpResponse<byte[]> first = post("/orders?dry=false&b=2", "alice", key, "{\"item\":\"book\"}");

    HttpResponse<byte[]> reordered = post("/orders?b=2&dry=false", "alice", key, "{\"item\":\"book\"}");
    HttpResponse<byte[]> other = post("/orders?dry=true&b=2", "alice", key, "{\"item\":\"book\"}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(reordered.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(text(other)).contains("CONFLICT.idempotency.payload_mismatch", "path, query or body");
    assertThat(service.orders("alice", key)).isEqualTo(1);
  }

  @Test
  void formEncodedBodyReachesTheHandlersParametersAndIsFingerprinted() throws Exception {
    String key = newKey();
    HttpRequest.Builder form = HttpRequest.newBuilder(URI.create(service.url("/orders?qty=2")))
        .header("Authorization", "Bearer alice").header("Idempotency-Key", key)
        .header("Content-Type", "application/x-www-form-urlencoded");

    HttpResponse<String> first = http.send(form.POST(HttpRequest.BodyPublishers.ofString("item=l%C3%A4mp")).build(),
        HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> other = http.send(form.POST(HttpRequest.BodyPublishers.ofString("item=desk")).build(),
        HttpResponse.BodyHandlers.ofString());

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).isEqualTo("item=l\u00e4mp qty=2");
    assertThat(other.statusCode()).isEqualTo(422);
  }

  @Test
  void multipartBodyIsRefusedWith415() throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create(service.url("/orders")))
        .header("Authorization", "Bearer alice").header("Idempotency-Key", newKey())
        .header("Content-Type", "multipart/form-data; boundary=x")
        .POST(HttpRequest.BodyPublishers.ofString("--x--")).build();

    HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(415);
    assertThat(r.body()).contains("VALIDATION.media_type");
  }

  @Test
  void contentTypeWithACharsetTheServerDoesNotKnowIsRefusedWith415AndNothingIsStored() throws Exception {
    String key = newKey();
    HttpRequest request = HttpRequest.newBuilder(URI.create(service.url("/orders")))
        .header("Authorization", "Bearer alice").header("Idempotency-Key", key)
        .header("Content-Type", "application/json; charset=nonsense")
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();

    HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(415);
    assertThat(r.body()).contains("VALIDATION.media_type");
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
    assertThat(service.orders("alice", key)).isZero();
  }

  @Test
  void sendErrorBecomesAProblemWithoutTheInternalMessage() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> first = post("/orders", "alice", key, "{\"mode\":\"senderror\"}");
    HttpResponse<byte[]> replay = post("/orders", "alice", key, "{\"mode\":\"senderror\"}");

    assertThat(first.statusCode()).isEqualTo(404);
    assertThat(first.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(text(first)).contains("\"code\":\"HTTP.404\"").doesNotContain("10.0.0.7");
    assertThat(replay.body()).isEqualTo(first.body());
  }

  @Test
  void deterministicFailureIsKeptAndReplayed() throws Exception {
    String key = newKey();
    HttpResponse<byte[]> first = post("/orders", "alice", key, "{\"mode\":\"invalid\"}");

    HttpResponse<byte[]> replay = post("/orders", "alice", key, "{\"mode\":\"invalid\"}");

    assertThat(first.statusCode()).isEqualTo(400);
    assertThat(first.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(replay.statusCode()).isEqualTo(400);
    assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(replay.body()).isEqualTo(first.body());
    assertThat(replay.headers().firstValue("Content-Type")).hasValue("application/problem+json");
  }

  @Test
  void transientFailureRollsTheHandlersWriteBackAndLeavesTheKeyFree() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> first = post("/orders", "alice", key, "{\"mode\":\"transient\"}");

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(first.headers().firstValue("Idempotency-Status")).isEmpty();
    assertThat(first.headers().firstValue("Idempotency-Key")).hasValue(key);
    assertThat(service.orders("alice", key)).as("the handler's write rolled back with the record").isZero();
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  @Test
  void handlerExceptionRollsBackAndKeepsNothing() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> r = post("/orders", "alice", key, "{\"mode\":\"throw\"}");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(service.orders("alice", key)).isZero();
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  @Test
  void responseOverTheKeptLimitIs500ProblemAndNothingIsApplied() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> r = post("/orders", "alice", key, "{\"mode\":\"big\"}");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(text(r)).contains("INTERNAL.response_too_large", "nothing was applied");
    assertThat(service.orders("alice", key)).isZero();
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  @Test
  void leasedAnswerOverTheKeptLimitIsKeptAsAppliedAndNeverRunsTwice() throws Exception {
    for (String mode : List.of("big", "big-writer")) {
      String key = newKey();

      HttpResponse<byte[]> first = post("/leased-orders", "alice", key, "{\"mode\":\"" + mode + "\"}");
      HttpResponse<byte[]> retry = post("/leased-orders", "alice", key, "{\"mode\":\"" + mode + "\"}");

      assertThat(first.statusCode()).as(mode).isEqualTo(500);
      assertThat(text(first)).contains("INTERNAL.response_too_large", "the request was applied",
          "\"retryable\":false");
      assertThat(retry.statusCode()).isEqualTo(500);
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(TestService.LEASED_RUNS.get(key)).as(mode).hasValue(1);
      assertThat(service.store.find(new RecordKey(Scope.of("alice"), Operation.of("POST /leased-orders"),
          IdempotencyKey.of(key))).orElseThrow().state()).isEqualTo(RecordState.FAILED);
    }
  }

  // ------------------------------------------------------------------ bad input

  @Test
  void malformedJsonIs400AndNothingIsStoredSoTheKeyStaysFree() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> bad = post("/orders", "alice", key, "{\"item\": \"book\",");
    HttpResponse<byte[]> good = post("/orders", "alice", key, "{\"item\":\"book\"}");

    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(text(bad)).contains("\"code\":\"VALIDATION.malformed_json\"", "line 1");
    assertThat(good.statusCode()).isEqualTo(201);
    assertThat(good.headers().firstValue("Idempotency-Status")).hasValue("stored");
  }

  @Test
  void bodyOverTheLimitIs413AndNothingRuns() throws Exception {
    String key = newKey();
    String big = "{\"item\":\"" + "x".repeat(TestService.MAX_REQUEST_BYTES) + "\"}";

    HttpResponse<byte[]> r = post("/orders", "alice", key, big);

    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(text(r)).contains("\"code\":\"VALIDATION.request_too_large\"");
    assertThat(service.orders("alice", key)).isZero();
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  /**
   * The rest of a body over the limit is read (up to {@link HttpBodies#MAX_DISCARDED_BYTES}) before the 413: a server
   * that answers and closes while the client still sends makes the connection reset, and the client may lose the 413.
   */
  @Test
  void aBodyOverTheLimitIsAnsweredEveryTimeAndTheNextRequestToo() throws Exception {
    String big = "{\"item\":\"" + "z".repeat(TestService.MAX_REQUEST_BYTES + 4096) + "\"}";
    for (int i = 0; i < 30; i++) {
      String key = newKey();

      HttpResponse<byte[]> refused = post("/orders", "alice", newKey(), big);
      HttpResponse<byte[]> next = post("/orders", "alice", key, "{\"item\":\"book\"}");

      assertThat(refused.statusCode()).isEqualTo(413);
      assertThat(refused.headers().allValues("Connection")).as("the connection stays open").doesNotContain("close");
      assertThat(next.statusCode()).isEqualTo(201);
    }
  }

  @Test
  void chunkedBodyOverTheLimitIs413() throws Exception {
    String key = newKey();
    byte[] big = ("{\"item\":\"" + "y".repeat(TestService.MAX_REQUEST_BYTES) + "\"}").getBytes(StandardCharsets.UTF_8);
    HttpRequest request = HttpRequest.newBuilder(URI.create(service.url("/orders")))
        .header("Authorization", "Bearer alice").header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(big))).build();

    HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());

    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  // ------------------------------------------------------------------ scopes and safe methods

  // ------------------------------------------------------------------ in flight

  @Test
  void duplicateWhileTheFirstIsInFlightIs409WithRetryAfterThenReplays() throws Exception {
    String key = newKey();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    service.chargeEntered = entered;
    service.chargeRelease = release;
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<HttpResponse<byte[]>> first = pool.submit(() -> post("/payments", "alice", key, "{\"amount\":100}"));
      assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
      service.chargeEntered = null;
      service.chargeRelease = null;

      HttpResponse<byte[]> duplicate = post("/payments", "alice", key, "{\"amount\":100}");
      release.countDown();
      HttpResponse<byte[]> firstAnswer = first.get(60, TimeUnit.SECONDS);
      HttpResponse<byte[]> after = post("/payments", "alice", key, "{\"amount\":100}");

      assertThat(duplicate.statusCode()).isEqualTo(409);
      assertThat(text(duplicate)).contains("\"code\":\"CONFLICT.idempotency.in_progress\"", "\"retryable\":true");
      long retryAfter = Long.parseLong(duplicate.headers().firstValue("Retry-After").orElseThrow());
      assertThat(retryAfter).isBetween(1L, TestService.LEASE.toSeconds());
      assertThat(duplicate.headers().firstValue("Idempotency-Key")).hasValue(key);
      assertThat(firstAnswer.statusCode()).isEqualTo(201);
      assertThat(firstAnswer.headers().firstValue("Idempotency-Status")).hasValue("stored");
      assertThat(after.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(after.body()).isEqualTo(firstAnswer.body());
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void waitModeHoldsTheDuplicateUntilTheFirstFinishesThenReplays() throws Exception {
    String key = newKey();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    service.chargeEntered = entered;
    service.chargeRelease = release;
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<HttpResponse<byte[]>> first = pool.submit(() -> post("/payments-wait", "alice", key, "{\"amount\":7}"));
      assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
      service.chargeEntered = null;
      service.chargeRelease = null;
      Future<HttpResponse<byte[]>> duplicate = pool.submit(() -> post("/payments-wait", "alice", key,
          "{\"amount\":7}"));
      waitUntilWaiting(duplicate);

      release.countDown();
      HttpResponse<byte[]> firstAnswer = first.get(60, TimeUnit.SECONDS);
      HttpResponse<byte[]> duplicateAnswer = duplicate.get(60, TimeUnit.SECONDS);

      assertThat(firstAnswer.statusCode()).isEqualTo(201);
      assertThat(duplicateAnswer.statusCode()).isEqualTo(201);
      assertThat(duplicateAnswer.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(duplicateAnswer.body()).isEqualTo(firstAnswer.body());
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  /** The duplicate is sent; whether it arrives before or after the release, it must replay (never run twice). */
  private static void waitUntilWaiting(Future<?> duplicate) {
    assertThat(duplicate.isDone()).as("the duplicate must wait, not answer, while the first is in flight").isFalse();
  }

  // ------------------------------------------------------------------ races

  @Test
  void concurrentDuplicatesOfAPhasedRequestChargeOnce() throws Exception {
    int rounds = 5;
    int concurrency = 32;
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      for (int round = 0; round < rounds; round++) {
        String tenant = round % 2 == 0 ? "alice" : "bob";
        String key = newKey();
        CyclicBarrier barrier = new CyclicBarrier(concurrency);
        List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
          futures.add(pool.submit(() -> {
            barrier.await(30, TimeUnit.SECONDS);
            return post("/payments", tenant, key, "{\"amount\":250}");
          }));
        }
        Set<String> bodies201 = new HashSet<>();
        for (Future<HttpResponse<byte[]>> f : futures) {
          HttpResponse<byte[]> r = f.get(120, TimeUnit.SECONDS);
          assertThat(r.statusCode()).as("round %d: %s", round, text(r)).isIn(201, 409);
          if (r.statusCode() == 201) {
            bodies201.add(text(r));
          } else {
            assertThat(r.headers().firstValue("Retry-After")).isPresent();
          }
        }
        String chargeKey = service.store.find(new RecordKey(Scope.of(tenant), Operation.of("POST /payments"),
            IdempotencyKey.of(key))).orElseThrow().derive("charge");
        assertThat(service.charges.get(chargeKey)).as("charges of round %d", round).hasValue(1);
        assertThat(bodies201).hasSizeLessThanOrEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ raw HTTP for what java.net.http refuses to send

  private String rawPost(String tenant, List<String> keys, String body) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    try (Socket socket = new Socket("127.0.0.1", service.port)) {
      socket.setSoTimeout(30_000);
      ByteArrayOutputStream req = new ByteArrayOutputStream();
      req.write(("POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
          + "Authorization: Bearer " + tenant + "\r\nContent-Type: application/json\r\nContent-Length: "
          + bytes.length + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
      for (String k : keys) {
        req.write("Idempotency-Key: ".getBytes(StandardCharsets.ISO_8859_1));
        req.write(k.getBytes(StandardCharsets.UTF_8));
        req.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
      }
      req.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
      req.write(bytes);
      OutputStream out = socket.getOutputStream();
      out.write(req.toByteArray());
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
