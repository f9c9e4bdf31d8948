package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.ServiceOfItsOwn;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Broken HTTP framing, on the service's own container (Tomcat): every request whose framing is wrong gets a
 * {@code application/problem+json} answer with a 4xx status, never a 5xx and never the container's HTML page, and
 * leaves nothing behind (the key of a refused idempotent request is still free).
 * <ul>
 *   <li>chunked bodies with a chunk size that is not hexadecimal, with LF-only lines, or with a size shorter than the
 *       data: 400 {@code VALIDATION.body};
 *   <li>a body stalled short of its {@code Content-Length}, or trickling in too slowly: 408
 *       {@code TRANSIENT.request_timeout}, within the configured deadline;
 *   <li>what the container refuses before any route sees it ({@code %2f} in the path, a header line with a space in
 *       its name or no colon, a bad request line, an unknown protocol version): 400 {@code VALIDATION.request};
 *   <li>seeded random framings: never a 5xx, never HTML.
 * </ul>
 * Runs on an H2 file database; {@link PostgresHostileFramingTest} runs it on PostgreSQL. The deadlines are shortened
 * here so that the stalled bodies answer within seconds; {@link SlowClientsTest} runs with the defaults.
 */
class HostileFramingTest extends ServiceOfItsOwn {
  static final int RANDOM_REQUESTS = 200;
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final Caller alice = new Caller("sk_frame_alice_" + run, "alice");
  private final String adminKey = "sk_frame_admin_" + run;

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), "--payments.admin-key=" + adminKey, "--payments.outbox.enabled=false",
        "--server.tomcat.connection-timeout=2s", "--payments.http.body-timeout=3s");
  }

  // ---------------------------------------------------------------- chunked bodies

  @Test
  void malformedChunkedBodiesGet400AndLeaveTheKeyFree() {
    for (Map.Entry<String, String> framing : brokenChunks(payment("acct_chunk_" + run)).entrySet()) {
      String key = UUID.randomUUID().toString();
      String answer = service.raw("POST /payments HTTP/1.1\r\n" + headers() + "Idempotency-Key: " + key
          + "\r\nTransfer-Encoding: chunked\r\n\r\n", bytes(framing.getValue()));

      JsonNode problem = assertProblem(answer, 400, "POST /payments, " + framing.getKey());
      assertThat(problem.path("code").asString()).as(framing.getKey()).isEqualTo("VALIDATION.body");
      assertThat(service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key = ?", key)).isZero();
      Answer retry = service.post("/payments", alice.apiKey(), key, payment("acct_chunk_" + run));
      assertThat(retry.status()).as("the refused key is still free: " + retry).isEqualTo(201);
    }
  }

  @Test
  void malformedChunkedBodiesGet400OnPlainRoutes() {
    String[] heads = {"PUT /accounts/acct_chunk_put_" + run + " HTTP/1.1\r\n" + headers() + "If-None-Match: *\r\n",
        "POST /webhook-endpoints HTTP/1.1\r\n" + headers()};
    for (String head : heads) {
      for (Map.Entry<String, String> framing : brokenChunks("{\"display_name\":\"x\"}").entrySet()) {
        String answer = service.raw(head + "Transfer-Encoding: chunked\r\n\r\n", bytes(framing.getValue()));
        JsonNode problem = assertProblem(answer, 400, head.lines().findFirst().orElseThrow() + ", " + framing.getKey());
        assertThat(problem.path("code").asString()).isEqualTo("VALIDATION.body");
      }
    }
    assertThat(service.get("/accounts/acct_chunk_put_" + run, alice.apiKey()).status()).isEqualTo(404);
  }

  // ---------------------------------------------------------------- stalled and trickling bodies

  @Test
  void aBodyStalledShortOfItsContentLengthGets408() {
    String key = UUID.randomUUID().toString();
    String answer = service.raw("POST /payments HTTP/1.1\r\n" + headers() + "Idempotency-Key: " + key
        + "\r\nContent-Length: 100\r\n\r\n", new Trickle("{\"account_id\":", 0));

    JsonNode problem = assertProblem(answer, 408, "a stalled POST /payments");
    assertThat(problem.path("code").asString()).isEqualTo("TRANSIENT.request_timeout");
    assertThat(problem.path("retryable").asBoolean()).isTrue();
    assertThat(service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key = ?", key)).isZero();

    String put = service.raw("PUT /accounts/acct_stall_" + run + " HTTP/1.1\r\n" + headers()
        + "If-None-Match: *\r\nContent-Length: 100\r\n\r\n", new Trickle("{\"display", 0));
    assertThat(assertProblem(put, 408, "a stalled PUT /accounts").path("code").asString())
        .isEqualTo("TRANSIENT.request_timeout");
  }

  @Test
  void aBodyTricklingInFasterThanTheReadTimeoutButSlowerThanTheDeadlineGets408() {
    // a byte every 200 ms never lets the 2 s read timeout expire; the 3 s deadline for the whole body does
    String answer = service.raw("POST /payments HTTP/1.1\r\n" + headers() + "Idempotency-Key: "
        + UUID.randomUUID() + "\r\nContent-Length: 200\r\n\r\n", new Trickle("x".repeat(200), 200));

    assertThat(assertProblem(answer, 408, "a trickling body").path("code").asString())
        .isEqualTo("TRANSIENT.request_timeout");
  }

  // ---------------------------------------------------------------- what the container refuses

  @Test
  void framingTheContainerRefusesGetsAProblemNotAnHtmlPage() {
    Map<String, String> requests = new LinkedHashMap<>();
    requests.put("%2f in the path", "GET /payments%2fpay_x HTTP/1.1\r\n" + headers() + "\r\n");
    requests.put("a space in a header name", "GET /ledger HTTP/1.1\r\n" + headers() + "Bad Header: x\r\n\r\n");
    requests.put("a header line without a colon", "GET /ledger HTTP/1.1\r\n" + headers() + "NoColon\r\n\r\n");
    requests.put("a space in the path", "GET /led ger HTTP/1.1\r\n" + headers() + "\r\n");
    requests.put("a control character in the path", "GET /ledger\u0001 HTTP/1.1\r\n" + headers() + "\r\n");
    requests.put("an unknown protocol", "GET /ledger HTTP/9.9\r\n" + headers() + "\r\n");
    requests.put("two Content-Lengths", "POST /payments HTTP/1.1\r\n" + headers()
        + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}");
    requests.put("Content-Length and chunked", "POST /payments HTTP/1.1\r\n" + headers()
        + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
    requests.put("a Content-Length that is not a number", "POST /payments HTTP/1.1\r\n" + headers()
        + "Content-Length: 2x\r\n\r\n{}");
    requests.put("an unknown transfer coding", "POST /payments HTTP/1.1\r\n" + headers()
        + "Transfer-Encoding: rot13\r\n\r\n{}");

    for (Map.Entry<String, String> r : requests.entrySet()) {
      String answer = service.raw(r.getValue(), InputStream.nullInputStream());
      int status = statusOf(answer);
      assertThat(status).as(r.getKey() + ": " + answer).isBetween(400, 499);
      JsonNode problem = assertProblem(answer, status, r.getKey());
      assertThat(problem.path("code").asString()).as(r.getKey()).startsWith("VALIDATION.");
    }
  }

  @Test
  void randomFramingNeverGetsA5xxOrAnHtmlPage() {
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    List<String> seen = new ArrayList<>();
    for (int i = 0; i < RANDOM_REQUESTS; i++) {
      String[] request = randomRequest(random);
      String answer = service.raw(request[0], bytes(request[1]));
      String what = "seed " + seed + ", request " + i + ": " + request[0].replace("\r\n", "\\r\\n") + " body "
          + request[1].replace("\r\n", "\\r\\n");
      int status = statusOf(answer);
      assertThat(status).as(what + " -> " + answer).isBetween(200, 499);
      assertThat(answer).as(what).doesNotContain("<html").doesNotContain("Exception");
      if (status >= 400) {
        assertProblem(answer, status, what);
      }
      seen.add(String.valueOf(status));
    }
    assertThat(seen).as("the random requests reached more than one outcome").hasSizeGreaterThan(1)
        .anyMatch(s -> s.startsWith("4"));
  }

  /** A request line and headers, and a body, drawn from a small grammar of framing mistakes. */
  private String[] randomRequest(Random random) {
    String json = payment("acct_rand_" + run);
    String[] paths = {"/payments", "/ledger", "/accounts/acct_r_" + random.nextInt(5), "/webhook-endpoints",
        "/payments%2f", "/pay ments", "/%00", "/ledger?account_id=%zz", "/admin/faults"};
    String[] methods = {"GET", "POST", "PUT", "PATCH", "DELETE", "G\u0001T", "POST"};
    StringBuilder head = new StringBuilder(methods[random.nextInt(methods.length)]).append(' ')
        .append(paths[random.nextInt(paths.length)]).append(random.nextInt(10) == 0 ? " HTTP/1.0" : " HTTP/1.1")
        .append("\r\n").append(headers()).append("Idempotency-Key: ").append(UUID.randomUUID()).append("\r\n");
    String body;
    switch (random.nextInt(6)) {
      case 0 -> body = "";
      case 1 -> {
        body = json;
        head.append("Content-Length: ").append(json.length()).append("\r\n");
      }
      case 2 -> {
        body = json.substring(0, random.nextInt(json.length()));
        head.append("Content-Length: ").append(json.length()).append("\r\n");
      }
      case 3 -> {
        List<String> chunks = new ArrayList<>(brokenChunks(json).values());
        body = chunks.get(random.nextInt(chunks.size()));
        head.append("Transfer-Encoding: chunked\r\n");
      }
      case 4 -> {
        body = Integer.toHexString(json.length()) + "\r\n" + json + "\r\n0\r\n\r\n";
        head.append("Transfer-Encoding: chunked\r\n");
      }
      default -> {
        body = json;
        String[] bad = {"X Y: z", ": empty", "Host: a\r\nHost: b", "Content-Length: -1", "Content-Length: 99999999999",
            "Expect: 100-continue", "Transfer-Encoding: gzip, chunked", "X: \u0000", "Content-Type: text/plain"};
        head.append(bad[random.nextInt(bad.length)]).append("\r\n");
      }
    }
    head.append("\r\n");
    return new String[] {head.toString(), body};
  }

  // ---------------------------------------------------------------- helpers

  /** Chunked framings of {@code body} that break the chunked coding, each under its name. */
  static Map<String, String> brokenChunks(String body) {
    Map<String, String> framings = new LinkedHashMap<>();
    framings.put("a chunk size that is not hexadecimal", "zz\r\n" + body + "\r\n0\r\n\r\n");
    framings.put("LF-only lines", Integer.toHexString(body.length()) + "\n" + body + "\n0\n\n");
    framings.put("a chunk size shorter than the data", "5\r\n" + body + "\r\n0\r\n\r\n");
    framings.put("a chunk size far too large", "ffffffffffffffffff\r\n" + body + "\r\n0\r\n\r\n");
    return framings;
  }

  private String headers() {
    return "Host: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer " + alice.apiKey()
        + "\r\nContent-Type: application/json\r\n";
  }

  private static String payment(String account) {
    return "{\"account_id\":\"" + account + "\",\"amount\":100,\"currency\":\"EUR\"}";
  }

  private static InputStream bytes(String text) {
    return new ByteArrayInputStream(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** The problem document of a raw answer, checked to be one with {@code status}. */
  static JsonNode assertProblem(String raw, int status, String what) {
    String answer = finalAnswer(raw);
    assertThat(statusOf(answer)).as(what + ": " + answer).isEqualTo(status);
    assertThat(answer).as(what).containsIgnoringCase("\r\nContent-Type: application/problem+json")
        .doesNotContain("<html");
    JsonNode problem = JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
    assertThat(problem.path("status").asInt()).as(what).isEqualTo(status);
    assertThat(problem.path("code").asString()).as(what).isNotEmpty();
    assertThat(problem.has("retryable")).as(what).isTrue();
    return problem;
  }

  /** The final status of a raw answer, after any interim {@code 1xx} answers. */
  static int statusOf(String raw) {
    String answer = finalAnswer(raw);
    assertThat(answer).as("an HTTP answer").startsWith("HTTP/1.1 ");
    return Integer.parseInt(answer.substring(9, 12));
  }

  /** A raw answer without the interim {@code 1xx} answers before it (such as {@code 100 Continue}). */
  private static String finalAnswer(String raw) {
    String answer = raw;
    while (answer.startsWith("HTTP/1.1 1") && answer.contains("\r\n\r\n")) {
      answer = answer.substring(answer.indexOf("\r\n\r\n") + 4);
    }
    return answer;
  }

  /**
   * A body that sends {@code text} a byte at a time, one per tick of a clock that ticks every {@code pauseMillis}
   * (at once when 0), and then blocks until the server closes the connection ({@code RunningService.raw} interrupts
   * its writer then; at most a minute): a client that trickles in a body, or stalls short of it.
   */
  static final class Trickle extends InputStream {
    private final byte[] text;
    private final long pauseMillis;
    private final Semaphore ticks = new Semaphore(0);
    private final CountDownLatch closed = new CountDownLatch(1);
    private ScheduledExecutorService clock;
    private int next;

    Trickle(String text, long pauseMillis) {
      this.text = text.getBytes(StandardCharsets.US_ASCII);
      this.pauseMillis = pauseMillis;
    }

    @Override
    public int read() {
      try {
        if (next < text.length) {
          awaitTick();
          return text[next++];
        }
        stopClock();
        closed.await(60, TimeUnit.SECONDS);
        return -1;
      } catch (InterruptedException e) {
        stopClock();
        Thread.currentThread().interrupt();
        return -1;
      }
    }

    private void awaitTick() throws InterruptedException {
      if (pauseMillis == 0) {
        return;
      }
      if (clock == null) {
        clock = Executors.newSingleThreadScheduledExecutor();
        clock.scheduleAtFixedRate(ticks::release, pauseMillis, pauseMillis, TimeUnit.MILLISECONDS);
      }
      ticks.acquire();
    }

    private void stopClock() {
      if (clock != null) {
        clock.shutdownNow();
      }
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) {
        return 0;
      }
      int c = read();
      if (c < 0) {
        return -1;
      }
      b[off] = (byte) c;
      return 1;
    }
  }
}
