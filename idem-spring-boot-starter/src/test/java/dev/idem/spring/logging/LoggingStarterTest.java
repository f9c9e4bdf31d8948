package dev.idem.spring.logging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.spring.logging.CapturedLogs.Line;
import dev.idem.test.Eventually;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Idem's logs in a running application over real HTTP, captured from Logback: the MDC filter's keys on every line of a
 * request (the application's own included), the listener's transition lines, the problem codes, and no secret
 * anywhere: not the API key of the {@code Authorization} header, not the request body. Tomcat runs one worker thread,
 * so a key (or an async answer's code) left behind in the MDC would show on the next request's lines.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LoggingStarterTest {
  private static final String CARD = "4242424242424242";

  private ConfigurableApplicationContext context;
  private HttpClient http;
  private int port;
  private CapturedLogs logs;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(LoggingApp.class).run("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:logging-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.name=logging-test", "--idem.store.initialize-schema=true", "--logging.level.root=INFO",
        "--logging.level.dev.idem=DEBUG", "--server.tomcat.threads.max=1", "--server.tomcat.threads.min-spare=1",
        "--spring.main.banner-mode=off");
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    logs = CapturedLogs.on(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  @AfterAll
  void stop() {
    if (logs != null) {
      logs.close();
    }
    if (context != null) {
      context.close();
    }
  }

  private HttpResponse<String> send(String method, String path, Map<String, String> headers, String body)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private static Map<String, String> authenticated(String key, String attempt) {
    Map<String, String> headers = new java.util.HashMap<>();
    headers.put("Authorization", "Bearer " + LoggingApp.API_KEY);
    if (key != null) {
      headers.put("Idempotency-Key", key);
    }
    if (attempt != null) {
      headers.put("Idempotency-Attempt", attempt);
    }
    return headers;
  }

  private List<Line> linesOf(String key) {
    return logs.lines().stream().filter(l -> key.equals(l.mdc().get(IdemMdc.IDEMPOTENCY_KEY))).toList();
  }

  private static Line only(List<Line> lines, Predicate<Line> which, String what) {
    List<Line> found = lines.stream().filter(which).toList();
    assertThat(found).as(what + " in " + lines).hasSize(1);
    return found.get(0);
  }

  private void assertNoSecretWasLogged() {
    assertThat(logs.lines()).isNotEmpty();
    assertThat(logs.lines()).allSatisfy(l -> {
      assertThat(l.everything()).doesNotContain(LoggingApp.API_KEY).doesNotContain("sk_secret")
          .doesNotContain(CARD);
    });
  }

  @Test
  void aRequestsLinesCarryItsKeyAndAttemptAndTheListenerLogsTheTransition() throws Exception {
    String key = "note-" + UUID.randomUUID();

    HttpResponse<String> created = send("POST", "/notes", authenticated(key, "2"), "{\"text\":\"card " + CARD + "\"}");

    assertThat(created.statusCode()).isEqualTo(201);
    List<Line> lines = linesOf(key);
    Line application = only(lines, l -> l.message().startsWith("creating a note"), "the handler's own line");
    assertThat(application.mdc()).containsEntry(IdemMdc.ATTEMPT, "2").doesNotContainKey(IdemMdc.ERROR_CODE);
    Line transition = only(lines, l -> l.message().contains("ABSENT -> COMPLETED"), "the atomic transition");
    assertThat(transition.logger()).isEqualTo("dev.idem");
    assertThat(transition.mdc()).containsEntry(IdemMdc.SCOPE, LoggingApp.TENANT)
        .containsEntry(IdemMdc.OPERATION, "POST /notes").containsEntry(IdemMdc.FROM_STATE, "ABSENT")
        .containsEntry(IdemMdc.TO_STATE, "COMPLETED").containsEntry(IdemMdc.ATTEMPT, "2");
    Line outcome = only(lines, l -> l.message().contains("outcome=STORED"), "the execution's line");
    assertThat(outcome.mdc()).doesNotContainKeys(IdemMdc.FROM_STATE, IdemMdc.TO_STATE, IdemMdc.ERROR_CODE);
    assertNoSecretWasLogged();
  }

  @Test
  void aPhasedRequestLogsAbsentToInProgressAndItsPhasesCarryTheKey() throws Exception {
    String key = "job-" + UUID.randomUUID();

    HttpResponse<String> created = send("POST", "/jobs", authenticated(key, "1"), "{}");

    assertThat(created.statusCode()).isEqualTo(201);
    List<Line> lines = linesOf(key);
    Line claim = only(lines, l -> l.message().contains("ABSENT -> IN_PROGRESS"), "the claim");
    assertThat(claim.mdc()).containsEntry(IdemMdc.FROM_STATE, "ABSENT").containsEntry(IdemMdc.TO_STATE,
        "IN_PROGRESS").containsEntry(IdemMdc.SCOPE, LoggingApp.TENANT).containsEntry(IdemMdc.OPERATION, "POST /jobs")
        .containsEntry(IdemMdc.ATTEMPT, "1");
    assertThat(lines).anySatisfy(l -> assertThat(l.message()).contains("IN_PROGRESS -> COMPLETED"));
    assertThat(lines).anySatisfy(l -> assertThat(l.message()).isEqualTo("running job job_1"));
    assertNoSecretWasLogged();
  }

  @Test
  void problemAnswersPutTheirCodeIntoTheMdc() throws Exception {
    String key = "mismatch-" + UUID.randomUUID();
    send("POST", "/notes", authenticated(key, null), "{\"text\":\"first\"}");

    HttpResponse<String> mismatch = send("POST", "/notes", authenticated(key, "3"), "{\"text\":\"second " + CARD
        + "\"}");
    HttpResponse<String> missing = send("POST", "/notes", authenticated(null, "2"), "{\"text\":\"no key\"}");

    assertThat(mismatch.statusCode()).isEqualTo(422);
    assertThat(missing.statusCode()).isEqualTo(400);
    List<Line> lines = linesOf(key);
    Line listener = only(lines, l -> l.logger().equals("dev.idem") && l.message().contains("outcome=PAYLOAD_MISMATCH"),
        "the listener's mismatch line");
    assertThat(listener.level()).isEqualTo("INFO");
    assertThat(listener.mdc()).containsEntry(IdemMdc.ERROR_CODE, "CONFLICT.idempotency.payload_mismatch")
        .containsEntry(IdemMdc.ATTEMPT, "3");
    Line answered = only(lines, l -> l.logger().equals(IdemMdcFilter.class.getName()), "the filter's line");
    assertThat(answered.message()).isEqualTo("POST /notes answered 422 CONFLICT.idempotency.payload_mismatch");
    assertThat(answered.mdc()).containsEntry(IdemMdc.ERROR_CODE, "CONFLICT.idempotency.payload_mismatch");
    // the filter logs once the request has ended, which may be just after the client has the answer
    Predicate<Line> missingKey = l -> l.logger().equals(IdemMdcFilter.class.getName())
        && "VALIDATION.idempotency_key_missing".equals(l.mdc().get(IdemMdc.ERROR_CODE));
    Eventually.await("the missing key's line is logged", Duration.ofSeconds(30), logs::lines,
        all -> all.stream().anyMatch(missingKey));
    Line noKey = only(logs.lines(), missingKey, "the missing key's line");
    assertThat(noKey.message()).isEqualTo("POST /notes answered 400 VALIDATION.idempotency_key_missing");
    assertThat(noKey.mdc()).containsEntry(IdemMdc.ATTEMPT, "2").doesNotContainKey(IdemMdc.IDEMPOTENCY_KEY);
    assertNoSecretWasLogged();
  }

  @Test
  void anAsyncAnswersProblemCodeIsNeverLeftInTheMdcOfTheThreadThatWroteIt() throws Exception {
    String key = "async-" + UUID.randomUUID();
    String tag = UUID.randomUUID().toString();
    String later = "after-async-" + UUID.randomUUID();

    // one worker thread: it runs the first dispatch, the async dispatch that writes the problem, and what follows
    HttpResponse<String> async = send("POST", "/async-problems", authenticated(key, "4"), "{}");
    HttpResponse<String> ping = send("GET", "/ping?tag=" + tag, Map.of(), null);
    HttpResponse<String> note = send("POST", "/notes", authenticated(later, null), "{\"text\":\"after\"}");
    HttpResponse<String> pingAgain = send("GET", "/ping?tag=again-" + tag, Map.of(), null);

    assertThat(async.statusCode()).isEqualTo(409);
    assertThat(async.body()).contains(LoggingApp.ASYNC_CODE);
    assertThat(ping.statusCode()).isEqualTo(200);
    assertThat(note.statusCode()).isEqualTo(201);
    assertThat(pingAgain.statusCode()).isEqualTo(200);
    Line pong = only(logs.lines(), l -> l.message().equals("ping " + tag), "the next request's line");
    assertThat(pong.mdc()).as("the worker thread's MDC after the async answer")
        .doesNotContainKeys(IdemMdc.ERROR_CODE, IdemMdc.IDEMPOTENCY_KEY, IdemMdc.ATTEMPT);
    Line pongAgain = only(logs.lines(), l -> l.message().equals("ping again-" + tag), "the line after the note");
    assertThat(pongAgain.mdc()).as("what a later request's frame put back")
        .doesNotContainKeys(IdemMdc.ERROR_CODE, IdemMdc.IDEMPOTENCY_KEY, IdemMdc.ATTEMPT);
    assertThat(linesOf(later)).isNotEmpty()
        .allSatisfy(l -> assertThat(l.mdc()).doesNotContainEntry(IdemMdc.ERROR_CODE, LoggingApp.ASYNC_CODE));
    assertThat(logs.lines()).noneMatch(l -> LoggingApp.ASYNC_CODE.equals(l.mdc().get(IdemMdc.ERROR_CODE)));
  }

  @Test
  void malformedHeadersAreLeftOutOrCutAndNothingOutlivesItsRequest() throws Exception {
    String longKey = "k".repeat(300);
    String key = "bad-attempt-" + UUID.randomUUID();

    HttpResponse<String> tooLong = send("POST", "/notes", authenticated(longKey, "0"), "{\"text\":\"x\"}");
    HttpResponse<String> badAttempt = send("POST", "/notes", authenticated(key, "2; DROP"), "{\"text\":\"x\"}");
    HttpResponse<String> ping = send("GET", "/ping", Map.of(), null);

    assertThat(tooLong.statusCode()).isEqualTo(400);
    assertThat(badAttempt.statusCode()).isEqualTo(201);
    assertThat(ping.statusCode()).isEqualTo(200);
    Line cut = only(logs.lines(), l -> "VALIDATION.idempotency_key_invalid".equals(l.mdc().get(IdemMdc.ERROR_CODE)),
        "the invalid key's line");
    assertThat(cut.mdc()).containsEntry(IdemMdc.IDEMPOTENCY_KEY, "k".repeat(255))
        .doesNotContainKey(IdemMdc.ATTEMPT);
    assertThat(linesOf(key)).isNotEmpty().allSatisfy(l -> assertThat(l.mdc()).doesNotContainKey(IdemMdc.ATTEMPT));
    Line pong = only(logs.lines(), l -> l.message().equals("ping"), "the plain request's line");
    assertThat(pong.mdc()).as("the worker thread's MDC after idempotent requests")
        .doesNotContainKeys(IdemMdc.IDEMPOTENCY_KEY, IdemMdc.ATTEMPT, IdemMdc.ERROR_CODE, IdemMdc.SCOPE);
    assertNoSecretWasLogged();
  }
}
