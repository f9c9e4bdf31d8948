package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.RunningService;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security: an oversized or hostile request is refused before any work is done. An {@code Idempotency-Key} over 255
 * characters, a header or a header section over the container's limit ({@code server.max-http-request-header-size}
 * 16 KB), more headers than the container takes, a body over {@code idem.filter.max-request-bytes} (64 KiB) whether
 * declared, sent or streamed in chunks that grow past it, a body that declares a gigabyte and sends a few bytes, and
 * JSON nested tens of thousands of levels deep: each gets its documented 4xx (never a 5xx, never a hang), and
 * afterwards the provider saw no call and no table gained a row ({@code idem_record}, {@code pay_payment},
 * {@code pay_refund}, {@code idem_outbox}, {@code idem_inbox}, {@code pay_webhook_endpoint}, {@code pay_account}, the
 * ledger and the provider's tables). The refused keys are
 * still free afterwards. Covers the idempotent routes ({@code POST /payments}, {@code POST /refunds}) and the plain
 * ones that read JSON ({@code POST /webhook-endpoints}, {@code PUT /accounts/{id}}, {@code PATCH /payments/{id}},
 * {@code POST /webhooks/provider}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OversizedInputTest {
  static final int MAX_BODY = 65_536;
  static final int MAX_HEADER_SECTION = 16 * 1024;
  static final List<String> TABLES = List.of("idem_record", "pay_payment", "pay_refund", "idem_outbox", "idem_inbox",
      "pay_webhook_endpoint", "pay_account", "pay_ledger_entry", "pay_provider_charge", "pay_provider_refund");

  private final Caller alice = new Caller("sk_big_alice_" + UUID.randomUUID().toString().substring(0, 8), "alice");
  private RunningService service;
  private String paymentId;
  private Map<String, Long> before;

  @TempDir
  static Path data;

  @BeforeAll
  void start() {
    service = RunningService.start("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments")
        + ";WRITE_DELAY=0;AUTO_SERVER=FALSE", alice.argument(), "--payments.outbox.enabled=false");
    Answer paid = pay(UUID.randomUUID().toString(),
        "{\"account_id\":\"acct_big\",\"amount\":100,\"currency\":\"EUR\"}");
    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    paymentId = paid.json().path("id").asString();
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @BeforeEach
  void snapshot() {
    before = state();
  }

  /** Every test only sends refused requests: nothing reached the provider or any table. */
  @AfterEach
  void nothingWasDone() {
    assertThat(state()).as("provider counters and row counts after the refusals").isEqualTo(before);
  }

  // ---------------------------------------------------------------- keys and headers

  @Test
  void aKeyOver255CharactersIsRefusedAndStaysFree() {
    for (int length : List.of(256, 1_000, 8_000, 15_000)) {
      String key = "k".repeat(length);

      Answer refused = pay(key, payment(1));

      assertThat(refused.status()).as(length + " characters: " + refused).isEqualTo(400);
      assertThat(refused.code()).isEqualTo("VALIDATION.idempotency_key_invalid");
      assertThat(refused.text()).as("the key is never echoed back").doesNotContain(key);
      assertThat(refused.header("Idempotency-Key")).isNull();
    }
    Answer onRefunds = refund("r".repeat(300), "{\"payment_id\":\"" + paymentId + "\",\"amount\":1}");
    assertThat(onRefunds.status()).isEqualTo(400);
    assertThat(onRefunds.code()).isEqualTo("VALIDATION.idempotency_key_invalid");
  }

  @Test
  void aHeaderOverTheContainersLimitIsRefusedByTheContainer() {
    String big = "x".repeat(MAX_HEADER_SECTION + 1024);
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("Idempotency-Key", big);
    cases.put("Authorization", "Bearer " + big);
    cases.put("X-Padding", big);
    cases.put("Content-Type", "application/json; x=" + big);

    for (Map.Entry<String, String> c : cases.entrySet()) {
      Map<String, String> headers = new LinkedHashMap<>(standardHeaders());
      headers.put(c.getKey(), c.getValue());

      String answer = rawPost("/payments", headers, payment(1).getBytes(StandardCharsets.UTF_8));

      assertThat(statusOf(answer)).as(c.getKey() + " of " + c.getValue().length() + " characters").isEqualTo(400);
      assertThat(answer).doesNotContain(big);
    }
  }

  @Test
  void headersThatTogetherExceedTheLimitOrAreTooManyAreRefused() {
    Map<String, String> many = new LinkedHashMap<>(standardHeaders());
    for (int i = 0; i < 2_000; i++) {
      many.put("X-H" + i, "v" + i);
    }
    Map<String, String> overCount = new LinkedHashMap<>(standardHeaders());
    for (int i = 0; i < 150; i++) {
      overCount.put("X-H" + i, "v");
    }
    Map<String, String> sixteenHalf = new LinkedHashMap<>(standardHeaders());
    for (int i = 0; i < 9; i++) {
      sixteenHalf.put("X-Pad" + i, "p".repeat(MAX_HEADER_SECTION / 8));
    }

    String manyAnswer = rawPost("/payments", many, payment(1).getBytes(StandardCharsets.UTF_8));
    String overCountAnswer = rawPost("/payments", overCount, payment(1).getBytes(StandardCharsets.UTF_8));
    String sixteenHalfAnswer = rawPost("/payments", sixteenHalf, payment(1).getBytes(StandardCharsets.UTF_8));

    assertThat(statusOf(manyAnswer)).as("2,000 headers").isEqualTo(400);
    assertThat(statusOf(overCountAnswer)).as("150 small headers").isEqualTo(400);
    assertThat(statusOf(sixteenHalfAnswer)).as("nine headers of 2 KiB").isEqualTo(400);
  }

  // ---------------------------------------------------------------- bodies

  @Test
  void aBodyOverTheLimitIsRefusedOnEveryRouteThatReadsOne() {
    String padding = "x".repeat(MAX_BODY);
    String payment = "{\"account_id\":\"acct_big\",\"amount\":1,\"currency\":\"EUR\",\"description\":\"" + padding
        + "\"}";
    String refund = "{\"payment_id\":\"" + paymentId + "\",\"amount\":1,\"note\":\"" + padding + "\"}";
    String endpoint = "{\"url\":\"http://127.0.0.1:9/hook\",\"events\":[\"*\"],\"note\":\"" + padding + "\"}";
    String account = "{\"name\":\"A\",\"email\":\"a@example.com\",\"note\":\"" + padding + "\"}";
    String keyOfPayment = UUID.randomUUID().toString();
    String keyOfRefund = UUID.randomUUID().toString();

    List<Answer> refused = List.of(
        pay(keyOfPayment, payment),
        refund(keyOfRefund, refund),
        service.post("/webhook-endpoints", alice.apiKey(), null, endpoint),
        createAccount("acct_big_profile", account),
        patch("/payments/" + paymentId, "{\"description\":\"" + padding + "\"}"),
        service.post("/webhooks/provider", null, null, "{\"id\":\"" + padding + "\"}"));

    for (Answer r : refused) {
      assertThat(r.status()).as(r.toString()).isEqualTo(413);
      assertThat(r.code()).isEqualTo("VALIDATION.request_too_large");
      assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
    }
    assertThat(refused.get(0).header("Idempotency-Status")).isNull();
    assertKeyStillFree(keyOfPayment);
  }

  @Test
  void aBodyThatDeclaresAGigabyteIsRefusedWithoutWaitingForIt() {
    Map<String, String> headers = new LinkedHashMap<>(standardHeaders());
    headers.put("Content-Length", "1000000000");

    String answer = rawPost("/payments", headers, "{\"account_id\":".getBytes(StandardCharsets.US_ASCII));

    assertThat(statusOf(answer)).as(answer).isEqualTo(413);
    assertThat(answer).contains("VALIDATION.request_too_large");
  }

  @Test
  void aChunkedBodyThatGrowsPastTheLimitMidStreamIsRefused() {
    String key = UUID.randomUUID().toString();
    Map<String, String> headers = new LinkedHashMap<>(standardHeaders());
    headers.put("Idempotency-Key", key);
    headers.put("Transfer-Encoding", "chunked");
    String opening = "{\"account_id\":\"acct_big\",\"amount\":1,\"currency\":\"EUR\",\"description\":\"";
    List<InputStream> chunks = new ArrayList<>();
    chunks.add(chunk(opening.getBytes(StandardCharsets.US_ASCII)));
    byte[] eightKilobytes = "y".repeat(8192).getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < 128; i++) {
      chunks.add(chunk(eightKilobytes));
    }
    chunks.add(chunk("\"}".getBytes(StandardCharsets.US_ASCII)));
    chunks.add(new ByteArrayInputStream("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));

    String answer = service.raw(head("/payments", headers),
        new SequenceInputStream(Collections.enumeration(chunks)));
    Answer streamed = service.send(service.request("/payments", alice.apiKey())
        .header("Idempotency-Key", UUID.randomUUID().toString()).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofInputStream(endless(opening))).build());

    assertThat(statusOf(answer)).as(answer).isEqualTo(413);
    assertThat(answer).contains("VALIDATION.request_too_large");
    assertThat(streamed.status()).as("an endless body of unknown length: " + streamed).isEqualTo(413);
    assertThat(streamed.code()).isEqualTo("VALIDATION.request_too_large");
    assertKeyStillFree(key);
  }

  @Test
  void jsonNestedTensOfThousandsDeepIsRefusedAsMalformedWithoutAServerError() {
    int arrays = (MAX_BODY - 200) / 2;
    String deepArray = "[".repeat(arrays) + "]".repeat(arrays);
    int objects = (MAX_BODY - 200) / 6;
    String deepObject = "{\"a\":".repeat(objects) + "1" + "}".repeat(objects);
    int inside = (MAX_BODY - 300) / 2;
    String inPayment = "{\"account_id\":\"acct_big\",\"amount\":1,\"currency\":\"EUR\",\"x\":"
        + "[".repeat(inside) + "]".repeat(inside) + "}";
    List<String> bodies = List.of(deepArray, deepObject, inPayment);
    List<String> keys = new ArrayList<>();

    for (String body : bodies) {
      String key = UUID.randomUUID().toString();
      keys.add(key);
      Answer refused = pay(key, body);
      assertThat(refused.status()).as(refused.toString()).isEqualTo(400);
      assertThat(refused.code()).isEqualTo("VALIDATION.malformed_json");
      assertThat(refused.header("Idempotency-Status")).isNull();
      Answer onRefunds = refund(UUID.randomUUID().toString(), body);
      assertThat(onRefunds.status()).as(onRefunds.toString()).isEqualTo(400);
      for (Answer plain : List.of(service.post("/webhook-endpoints", alice.apiKey(), null, body),
          createAccount("acct_deep", body), patch("/payments/" + paymentId, body))) {
        assertThat(plain.status()).as(plain.toString()).isEqualTo(400);
        assertThat(plain.header("Content-Type")).isEqualTo("application/problem+json");
      }
    }
    for (String key : keys) {
      assertKeyStillFree(key);
    }
  }

  // ---------------------------------------------------------------- helpers

  /** What the tests must not change: the provider's counters and the row count of every table. */
  private Map<String, Long> state() {
    Map<String, Long> state = new LinkedHashMap<>();
    service.get("/admin/provider/stats", null).json().properties()
        .forEach(e -> state.put("provider " + e.getKey(), e.getValue().asLong()));
    for (String table : TABLES) {
      state.put(table, service.count("SELECT COUNT(*) FROM " + table));
    }
    return state;
  }

  private void assertKeyStillFree(String key) {
    assertThat(service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key = ?", key)).as(key).isZero();
  }

  private Answer pay(String key, String json) {
    return service.post("/payments", alice.apiKey(), key, json);
  }

  private Answer refund(String key, String json) {
    return service.post("/refunds", alice.apiKey(), key, json);
  }

  private Answer patch(String path, String json) {
    return service.send(service.request(path, alice.apiKey()).header("Content-Type", "application/json")
        .header("If-Match", "*").method("PATCH", HttpRequest.BodyPublishers.ofString(json)).build());
  }

  private Answer createAccount(String id, String json) {
    return service.send(service.request("/accounts/" + id, alice.apiKey()).header("Content-Type", "application/json")
        .header("If-None-Match", "*").PUT(HttpRequest.BodyPublishers.ofString(json)).build());
  }

  private static String payment(long amount) {
    return "{\"account_id\":\"acct_big\",\"amount\":" + amount + ",\"currency\":\"EUR\"}";
  }

  private Map<String, String> standardHeaders() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Host", "127.0.0.1");
    headers.put("Connection", "close");
    headers.put("Authorization", "Bearer " + alice.apiKey());
    headers.put("Content-Type", "application/json");
    headers.put("Idempotency-Key", UUID.randomUUID().toString());
    return headers;
  }

  private String rawPost(String path, Map<String, String> headers, byte[] body) {
    Map<String, String> all = new LinkedHashMap<>(headers);
    all.putIfAbsent("Content-Length", Integer.toString(body.length));
    return service.raw(head(path, all), new ByteArrayInputStream(body));
  }

  private static String head(String path, Map<String, String> headers) {
    StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    return head.append("\r\n").toString();
  }

  /** The status code of a raw HTTP/1.1 answer. */
  private static int statusOf(String answer) {
    assertThat(answer).as("an HTTP answer").startsWith("HTTP/1.1 ");
    return Integer.parseInt(answer.substring(9, 12));
  }

  private static InputStream chunk(byte[] data) {
    byte[] size = (Integer.toHexString(data.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[size.length + data.length + 2];
    System.arraycopy(size, 0, out, 0, size.length);
    System.arraycopy(data, 0, out, size.length, data.length);
    out[out.length - 2] = '\r';
    out[out.length - 1] = '\n';
    return new ByteArrayInputStream(out);
  }

  /** A body that starts like a payment and never ends (up to 64 MiB, so that a broken limit fails, not hangs). */
  private static Supplier<InputStream> endless(String opening) {
    return () -> new InputStream() {
      private final byte[] start = opening.getBytes(StandardCharsets.US_ASCII);
      private long position;

      @Override
      public int read() {
        if (position >= 64L << 20) {
          return -1;
        }
        return position < start.length ? start[(int) position++] : (position++ % 2 == 0 ? 'z' : 'Z');
      }
    };
  }
}
