package dev.idem.test.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The rows of the HTTP contract that hold for any server running {@code IdempotencyFilter} in front of an atomic JSON
 * route, checked over real HTTP with the JDK's {@link HttpClient}. Extend it in a test of your application; the kit
 * starts nothing, so start your server before the tests run (a {@code @BeforeAll} with
 * {@code @TestInstance(PER_CLASS)}, or a static field) and stop it afterwards.
 *
 * <p>A subclass provides:
 * <ul>
 *   <li>{@link #uri(String)}: the absolute URI of a path on the running server;</li>
 *   <li>{@link #asTenant(HttpRequest.Builder, String)}: the credential that makes a request one tenant's (a bearer
 *       token, a header), from which the server's scope resolver takes the scope of the keys;</li>
 *   <li>{@link #createPath()}: an atomic {@code POST} route that requires a key and makes one business row (an effect)
 *       per request it runs, whose {@code GET} is a safe read;</li>
 *   <li>{@link #expectedCreatedStatus()}: the status that route answers to {@link #body()};</li>
 *   <li>{@link #effects(String, String)}: how many business rows a tenant's key made.</li>
 * </ul>
 * Optional: {@link #tenant()} and {@link #otherTenant()} (two tenants {@code asTenant} accepts, {@code alice} and
 * {@code bob} by default), the JSON bodies ({@link #body()}, {@link #reorderedBody()}, {@link #differentBody()} and
 * {@link #differingField()}), the size of the race ({@link #raceThreads()}, {@link #raceRounds()}), and
 * {@link #checkStored} and {@link #checkReplayed} for the application's own assertions on the first answer and on
 * its replay.
 *
 * <p>Each row uses fresh keys, so the rows can share one server and one database. The rows and what they prove:
 * <ul>
 *   <li>an unsafe request without a key is refused 400 {@code VALIDATION.idempotency_key_missing}, a problem document;
 *   </li>
 *   <li>an empty key, a key with a space and a key of 256 characters are refused 400
 *       {@code VALIDATION.idempotency_key_invalid}, without echoing the key and without an effect; 255 characters
 *       are accepted;</li>
 *   <li>a key with parameters ({@code "k";p=1}, {@code k;p=1}) is refused 400 and never becomes another key;
 *       a quoted string that is not a structured-field string is refused 400;</li>
 *   <li>the quoted key ({@code "k"}) and the bare key ({@code k}) are one key: the second replays the first;</li>
 *   <li>a keyed request without a credential is refused 401 {@code AUTH.unauthenticated}, without an effect;</li>
 *   <li>the first request runs the handler once and answers its status with {@code Idempotency-Status: stored} and
 *       the key echoed;</li>
 *   <li>a retry with the same key and an equal body (other member order and whitespace) answers the same status and
 *       the same body byte for byte with {@code Idempotency-Status: replayed} and {@code Idempotent-Replayed: true},
 *       without a second effect;</li>
 *   <li>the same key with another body is refused 422 {@code CONFLICT.idempotency.payload_mismatch} naming the
 *       differing field, without a second effect;</li>
 *   <li>the same key from another tenant is an independent request with its own effect and answer;</li>
 *   <li>a {@code GET} with a key passes the filter untouched;</li>
 *   <li>{@link #raceThreads()} threads sending one key at once, {@link #raceRounds()} times with a fresh key each,
 *       make exactly one effect per key; every answer is the created status or 409
 *       {@code CONFLICT.idempotency.in_progress}, exactly one is marked {@code stored}, and all created answers carry
 *       one body; and the same race again with every request saying it is a first attempt
 *       ({@code Idempotency-Attempt: 1}, which lets an atomic or phased route skip its look-up before the work);</li>
 *   <li>a first attempt sent twice and then a retry ({@code Idempotency-Attempt: 2}) make one effect, and the second
 *       and third answers replay the first.</li>
 * </ul>
 */
public abstract class HttpContractKit {
  /** The client the rows send with: HTTP/1.1, a 5-second connect timeout. */
  protected final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * The absolute URI of a path on the server under test.
   *
   * @param path a path with an optional query, starting with {@code /}
   * @return the URI to send to
   */
  protected abstract URI uri(String path);

  /**
   * Makes a request one tenant's: adds the credential the server's scope resolver reads.
   *
   * @param request the request being built
   * @param tenant {@link #tenant()} or {@link #otherTenant()}
   * @return {@code request}
   */
  protected abstract HttpRequest.Builder asTenant(HttpRequest.Builder request, String tenant);

  /**
   * The atomic {@code POST} route under test: it requires a key and makes one effect per run.
   *
   * @return a path starting with {@code /}
   */
  protected abstract String createPath();

  /**
   * The status the route answers to {@link #body()}, such as 201.
   *
   * @return a 2xx status
   */
  protected abstract int expectedCreatedStatus();

  /**
   * How many business rows the route committed for a tenant's key.
   *
   * @param tenant the tenant
   * @param key the key as the filter reads it (unquoted)
   * @return the number of rows
   * @throws Exception if they cannot be counted
   */
  protected abstract long effects(String tenant, String key) throws Exception;

  /**
   * A tenant {@link #asTenant} accepts.
   *
   * @return {@code alice} unless overridden
   */
  protected String tenant() {
    return "alice";
  }

  /**
   * A second tenant {@link #asTenant} accepts, other than {@link #tenant()}.
   *
   * @return {@code bob} unless overridden
   */
  protected String otherTenant() {
    return "bob";
  }

  /**
   * A JSON body the route accepts.
   *
   * @return {@code {"item":"book","qty":1}} unless overridden
   */
  protected String body() {
    return "{\"item\":\"book\",\"qty\":1}";
  }

  /**
   * The same JSON as {@link #body()} with other member order and whitespace.
   *
   * @return {@code { "qty": 1, "item": "book" }} unless overridden
   */
  protected String reorderedBody() {
    return "{ \"qty\": 1, \"item\": \"book\" }";
  }

  /**
   * {@link #body()} with one member changed: {@link #differingField()}.
   *
   * @return {@code {"item":"book","qty":2}} unless overridden
   */
  protected String differentBody() {
    return "{\"item\":\"book\",\"qty\":2}";
  }

  /**
   * The member in which {@link #differentBody()} differs from {@link #body()}.
   *
   * @return {@code qty} unless overridden
   */
  protected String differingField() {
    return "qty";
  }

  /**
   * How many threads send one key at once in the race row.
   *
   * @return 16 unless overridden
   */
  protected int raceThreads() {
    return 16;
  }

  /**
   * How many rounds, each with a fresh key, the race row runs.
   *
   * @return 50 unless overridden
   */
  protected int raceRounds() {
    return 50;
  }

  /**
   * The application's own assertions on a first answer marked {@code stored}; nothing unless overridden.
   *
   * @param answer the answer
   * @param tenant the tenant that sent {@link #body()}
   * @param key the key
   * @throws Exception if an assertion cannot run
   */
  protected void checkStored(HttpResponse<byte[]> answer, String tenant, String key) throws Exception {}

  /**
   * The application's own assertions on a replay; nothing unless overridden.
   *
   * @param first the first answer
   * @param replay the replayed answer
   * @throws Exception if an assertion cannot run
   */
  protected void checkReplayed(HttpResponse<byte[]> first, HttpResponse<byte[]> replay) throws Exception {}

  /**
   * A fresh key.
   *
   * @return {@code k-} and a random UUID
   */
  protected String newKey() {
    return "k-" + UUID.randomUUID();
  }

  /**
   * Sends a JSON {@code POST}.
   *
   * @param path the path
   * @param tenant the tenant, or null for a request without a credential
   * @param key the {@code Idempotency-Key} header's value, or null for none
   * @param body the JSON body
   * @return the answer
   * @throws Exception if it cannot be sent
   */
  protected HttpResponse<byte[]> post(String path, String tenant, String key, String body) throws Exception {
    return post(path, tenant, key, body, 0);
  }

  private HttpResponse<byte[]> post(String path, String tenant, String key, String body, int attempt)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (tenant != null) {
      asTenant(b, tenant);
    }
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    if (attempt > 0) {
      b.header("Idempotency-Attempt", Integer.toString(attempt));
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /**
   * An answer's body as UTF-8 text.
   *
   * @param answer the answer
   * @return its body
   */
  protected static String text(HttpResponse<byte[]> answer) {
    return new String(answer.body(), StandardCharsets.UTF_8);
  }

  private HttpResponse<byte[]> create(String tenant, String key, String body) throws Exception {
    return post(createPath(), tenant, key, body);
  }

  @Test
  void unsafeRequestWithoutAKeyIs400KeyMissing() throws Exception {
    HttpResponse<byte[]> r = create(tenant(), null, body());

    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(text(r)).contains("\"code\":\"VALIDATION.idempotency_key_missing\"", "\"retryable\":false",
        "\"type\":\"urn:idem:problem:VALIDATION.idempotency_key_missing\"", "\"status\":400", "\"title\":");
  }

  @Test
  void anEmptyKeyIs400KeyInvalid() throws Exception {
    HttpResponse<byte[]> r = create(tenant(), "", body());

    assertKeyInvalid(r);
  }

  @Test
  void aKeyWithASpaceIs400KeyInvalidWithoutEchoingItOrAnEffect() throws Exception {
    String key = "two words " + UUID.randomUUID();

    HttpResponse<byte[]> r = create(tenant(), key, body());

    assertKeyInvalid(r);
    assertThat(text(r)).doesNotContain(key);
    assertThat(effects(tenant(), key)).isZero();
  }

  @Test
  void aKeyLongerThan255CharactersIs400KeyInvalidWithoutAnEffect() throws Exception {
    String key = "a".repeat(255) + UUID.randomUUID().toString().charAt(0);

    HttpResponse<byte[]> r = create(tenant(), key, body());

    assertKeyInvalid(r);
    assertThat(text(r)).contains("256 characters");
    assertThat(effects(tenant(), key) + effects(tenant(), key.substring(0, 255))).isZero();
  }

  private static void assertKeyInvalid(HttpResponse<byte[]> r) {
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(text(r)).contains("\"code\":\"VALIDATION.idempotency_key_invalid\"");
  }

  @Test
  void aKeyOf255CharactersIsAccepted() throws Exception {
    String key = (newKey() + "b".repeat(255)).substring(0, 255);

    HttpResponse<byte[]> r = create(tenant(), key, body());

    assertThat(r.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(r.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(effects(tenant(), key)).isEqualTo(1);
  }

  /**
   * A refusal given before the body is read (no key, a bad key) must leave the connection able to carry the next
   * request: the client's pool sends it on the same connection at once, and a server that closes it then fails that
   * request with no answer at all. The refused bodies come in one-byte chunks, so that they are still arriving when
   * the refusal is written.
   */
  @Test
  void aRefusedRequestLeavesTheConnectionUsableForTheNextOne() throws Exception {
    for (int i = 0; i < 100; i++) {
      String key = newKey();

      HttpResponse<byte[]> missing = sendInPieces(null);
      HttpResponse<byte[]> invalid = sendInPieces(key + " " + i);
      HttpResponse<byte[]> created = create(tenant(), key, body());

      assertThat(missing.statusCode()).isEqualTo(400);
      assertThat(invalid.statusCode()).isEqualTo(400);
      assertThat(created.statusCode()).isEqualTo(expectedCreatedStatus());
    }
  }

  private HttpResponse<byte[]> sendInPieces(String key) throws Exception {
    List<byte[]> pieces = new ArrayList<>();
    for (byte b : body().getBytes(StandardCharsets.UTF_8)) {
      pieces.add(new byte[] {b});
    }
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(createPath())).timeout(Duration.ofSeconds(60))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArrays(pieces));
    asTenant(b, tenant());
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void aKeyWithParametersIsRefusedAndNeverBecomesAnotherKey() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> bare = create(tenant(), key, body());
    HttpResponse<byte[]> parameterised = create(tenant(), "\"" + key + "\";p=1", body());
    HttpResponse<byte[]> bareParameterised = create(tenant(), key + ";p=1", body());
    HttpResponse<byte[]> quoted = create(tenant(), "\"" + key + "\"", body());

    assertThat(bare.statusCode()).isEqualTo(expectedCreatedStatus());
    for (HttpResponse<byte[]> r : List.of(parameterised, bareParameterised)) {
      assertThat(r.statusCode()).isEqualTo(400);
      assertThat(text(r)).contains("VALIDATION.idempotency_key_invalid", "parameters are not accepted");
    }
    assertThat(quoted.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(quoted.body()).isEqualTo(bare.body());
    assertThat(effects(tenant(), key)).isEqualTo(1);
    assertThat(effects(tenant(), key + ";p=1") + effects(tenant(), "\"" + key + "\";p=1")).isZero();
  }

  @Test
  void aQuotedKeyThatIsNotAStructuredFieldStringIs400() throws Exception {
    for (String malformed : List.of("\"K", "\"K\\a\"", "\"K\"x", "K\"", "\"K\\\"")) {
      HttpResponse<byte[]> r = create(tenant(), malformed, body());

      assertThat(r.statusCode()).as(malformed).isEqualTo(400);
      assertThat(text(r)).as(malformed).contains("VALIDATION.idempotency_key_invalid");
    }
  }

  @Test
  void theQuotedKeyAndTheBareKeyAreOneKey() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> first = create(tenant(), "\"" + key + "\"", body());
    HttpResponse<byte[]> second = create(tenant(), key, body());

    assertThat(first.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(first.headers().firstValue("Idempotency-Key")).hasValue("\"" + key + "\"");
    assertThat(second.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(second.body()).isEqualTo(first.body());
    assertThat(effects(tenant(), key)).isEqualTo(1);
  }

  @Test
  void aKeyedRequestWithoutACredentialIs401WithoutAnEffect() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> r = create(null, key, body());

    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(text(r)).contains("\"code\":\"AUTH.unauthenticated\"");
    assertThat(effects(tenant(), key) + effects(otherTenant(), key)).isZero();
  }

  @Test
  void theFirstRequestRunsOnceAndIsMarkedStoredWithTheKeyEchoed() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> r = create(tenant(), key, body());

    assertThat(r.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(r.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(r.headers().firstValue("Idempotency-Key")).hasValue(key);
    assertThat(r.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(effects(tenant(), key)).isEqualTo(1);
    checkStored(r, tenant(), key);
  }

  @Test
  void aRetryWithAnEqualBodyReplaysByteForByteWithoutASecondEffect() throws Exception {
    String key = newKey();
    HttpResponse<byte[]> first = create(tenant(), key, body());

    HttpResponse<byte[]> replay = create(tenant(), key, reorderedBody());

    assertThat(replay.statusCode()).isEqualTo(first.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(replay.body()).isEqualTo(first.body());
    assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
    assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
    assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(effects(tenant(), key)).isEqualTo(1);
    checkReplayed(first, replay);
  }

  @Test
  void theSameKeyWithAnotherBodyIs422PayloadMismatchNamingTheField() throws Exception {
    String key = newKey();
    create(tenant(), key, body());

    HttpResponse<byte[]> r = create(tenant(), key, differentBody());

    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(r.headers().firstValue("Idempotency-Key")).hasValue(key);
    assertThat(text(r)).contains("\"code\":\"CONFLICT.idempotency.payload_mismatch\"", "\"retryable\":false",
        "\"fields\":[\"" + differingField() + "\"]");
    assertThat(effects(tenant(), key)).isEqualTo(1);
  }

  @Test
  void theSameKeyFromAnotherTenantIsAnIndependentRequest() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> mine = create(tenant(), key, body());
    HttpResponse<byte[]> theirs = create(otherTenant(), key, body());

    assertThat(mine.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(mine.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(theirs.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(theirs.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(theirs.body()).isNotEqualTo(mine.body());
    assertThat(effects(tenant(), key)).isEqualTo(1);
    assertThat(effects(otherTenant(), key)).isEqualTo(1);
  }

  @Test
  void aGetWithAKeyIsUntouched() throws Exception {
    HttpRequest get = asTenant(HttpRequest.newBuilder(uri(createPath())), tenant())
        .header("Idempotency-Key", newKey()).timeout(Duration.ofSeconds(60)).GET().build();

    HttpResponse<byte[]> r = http.send(get, HttpResponse.BodyHandlers.ofByteArray());

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Idempotency-Status")).isEmpty();
    assertThat(r.headers().firstValue("Idempotency-Key")).isEmpty();
    assertThat(r.headers().firstValue("Idempotent-Replayed")).isEmpty();
  }

  @Test
  void aFirstAttemptSentTwiceAndThenARetryMakeOneEffectAndOneAnswer() throws Exception {
    String key = newKey();

    HttpResponse<byte[]> first = post(createPath(), tenant(), key, body(), 1);
    HttpResponse<byte[]> againAsFirst = post(createPath(), tenant(), key, body(), 1);
    HttpResponse<byte[]> retry = post(createPath(), tenant(), key, reorderedBody(), 2);

    assertThat(first.statusCode()).isEqualTo(expectedCreatedStatus());
    assertThat(first.headers().firstValue("Idempotency-Status")).hasValue("stored");
    for (HttpResponse<byte[]> replay : List.of(againAsFirst, retry)) {
      assertThat(replay.statusCode()).isEqualTo(first.statusCode());
      assertThat(replay.body()).isEqualTo(first.body());
      assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    }
    assertThat(effects(tenant(), key)).isEqualTo(1);
  }

  @Test
  void concurrentRequestsWithOneKeyMakeExactlyOneEffect() throws Exception {
    race(0);
  }

  @Test
  void concurrentFirstAttemptsWithOneKeyMakeExactlyOneEffect() throws Exception {
    race(1);
  }

  private void race(int attempt) throws Exception {
    int threads = raceThreads();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < raceRounds(); round++) {
        String key = newKey();
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<HttpResponse<byte[]>>> answers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          answers.add(pool.submit(() -> {
            barrier.await(30, TimeUnit.SECONDS);
            return post(createPath(), tenant(), key, body(), attempt);
          }));
        }
        Set<String> bodies = new HashSet<>();
        int stored = 0;
        for (Future<HttpResponse<byte[]>> f : answers) {
          HttpResponse<byte[]> r = f.get(120, TimeUnit.SECONDS);
          // 409 in_progress only if a duplicate waited longer than the store's lock timeout
          assertThat(r.statusCode()).as("round %d: %s", round, text(r)).isIn(expectedCreatedStatus(), 409);
          if (r.statusCode() == 409) {
            assertThat(text(r)).as("round %d", round).contains("\"code\":\"CONFLICT.idempotency.in_progress\"");
          } else {
            bodies.add(text(r));
            stored += "stored".equals(r.headers().firstValue("Idempotency-Status").orElse("")) ? 1 : 0;
          }
        }
        assertThat(effects(tenant(), key)).as("effects of round %d", round).isEqualTo(1);
        assertThat(stored).as("answers marked stored in round %d", round).isEqualTo(1);
        assertThat(bodies).as("distinct bodies of round %d", round).hasSize(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
