package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.DatabaseOfItsOwn;
import dev.idem.examples.payments.RunningService;
import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security: text the database cannot hold never reaches it. A NUL ({@code \u0000}) or an unpaired surrogate
 * ({@code \ud800}, {@code \udc00}, or their raw three-byte forms) in any string or member name of a JSON body, and a
 * query string or form body with a NUL ({@code %00}), a byte sequence that is not UTF-8 ({@code %c0}) or a broken
 * escape ({@code %zz}), get a 400 problem that is not retryable, before any work: no table gains a row and the
 * provider sees no call. Covers every route that reads JSON ({@code POST /payments}, {@code POST /refunds},
 * {@code PUT /accounts/{id}}, {@code PATCH /payments/{id}}, {@code POST /webhook-endpoints}, the provider's
 * {@code POST /provider/charges} and {@code POST /provider/refunds}) and the listings that take query parameters
 * (the ledger, the admin, outbox and provider listings, the actuator). A bounded random run mixes such text into
 * every route and field. No answer of the service, to these requests or any other, holds SQL error text. Runs on
 * Tomcat, the service's own container, with an H2 file database; {@link PostgresHostileTextTest} runs it on
 * PostgreSQL, which refuses NUL in text.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileTextTest {
  /** What a database's error text looks like: none of it may appear in an answer. */
  static final List<String> SQL_TEXT = List.of("ERROR:", "SQLState", "SQLSTATE", "SQL state", "invalid byte sequence",
      "PSQLException", "org.postgresql", "org.h2", "JdbcSQL", "Exception", "0x00");
  /** JSON string contents (as JSON text) that the store cannot hold. */
  static final List<String> UNSTORABLE = List.of("a\\u0000b", "\\u0000", "x\\ud800", "\\udc00y", "\\ud800\\u0041",
      "\\udbff");
  /** Query strings that are not valid percent-encoded UTF-8, or hold a NUL. */
  static final List<String> BAD_QUERY_VALUES = List.of("a%00b", "%00", "%c0", "%c0%80", "%zz", "%", "a%2", "%e9",
      "%ed%a0%80", "%ff%fe");
  static final int RANDOM_REQUESTS = 300;

  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final Caller alice = new Caller("sk_text_alice_" + run, "alice");
  RunningService service;
  private String paymentId;
  private String chargeId;

  /** A database of its own, dropped after the run; null for an H2 file in {@link #data}. */
  DatabaseOfItsOwn database;

  @TempDir
  static Path data;

  @BeforeAll
  void start() {
    List<String> args = new ArrayList<>(database != null ? database.arguments()
        : List.of("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0"));
    args.add(alice.argument());
    args.add("--payments.outbox.enabled=false");
    service = RunningService.start(args.toArray(String[]::new));
    Answer paid = checked(service.post("/payments", alice.apiKey(), UUID.randomUUID().toString(),
        "{\"account_id\":\"acct_text\",\"amount\":500,\"currency\":\"EUR\"}"));
    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    paymentId = paid.json().path("id").asString();
    Answer charged = checked(service.send(service.request("/provider/charges", null)
        .header("Content-Type", "application/json").header("Idempotency-Key", UUID.randomUUID().toString())
        .POST(HttpRequest.BodyPublishers.ofString("{\"account_id\":\"acct_text\",\"amount\":5,\"currency\":\"EUR\"}"))
        .build()));
    assertThat(charged.status()).as(charged.toString()).isEqualTo(201);
    chargeId = charged.json().path("id").asString();
    Answer account = checked(send("PUT", "/accounts/acct_text", "If-None-Match", "*",
        "{\"name\":\"A\",\"email\":\"a@example.com\"}"));
    assertThat(account.status()).as(account.toString()).isEqualTo(201);
  }

  @AfterAll
  void stop() {
    try (DatabaseOfItsOwn dropped = database; RunningService stopped = service) {
      // closes the service, then drops the database (a null one is skipped)
    }
  }

  @Test
  void unstorableTextInAnyStringOfAJsonBodyIsRefusedWith400BeforeAnyWork() {
    Map<String, Long> before = state();
    for (String bad : UNSTORABLE) {
      boolean nul = bad.contains("\\u0000");
      for (JsonRoute route : jsonRoutes()) {
        for (Map.Entry<String, String> field : route.fields.entrySet()) {
          Answer refused = route.send(field.getValue().replace("~~", bad));

          String what = route + " with " + bad + " in " + field.getKey() + ": " + refused;
          assertRefused(refused, what);
          if (nul || !route.idempotent) {
            // an unpaired surrogate on an idempotent route is refused earlier, by the filter, as malformed JSON
            assertThat(refused.code()).as(what).isEqualTo("VALIDATION." + field.getKey());
          } else {
            assertThat(refused.code()).as(what).isIn("VALIDATION." + field.getKey(), "VALIDATION.malformed_json");
          }
          assertThat(refused.header("Idempotency-Status")).as(what).isNull();
        }
      }
    }
    assertThat(state()).as("provider counters and row counts after the refusals").isEqualTo(before);
  }

  @Test
  void aMemberNameWithANulOrAnUnpairedSurrogateIsRefused() {
    Map<String, Long> before = state();
    for (String bad : List.of("\\u0000", "k\\u0000", "\\ud800")) {
      for (JsonRoute route : jsonRoutes()) {
        String body = route.fields.values().iterator().next().replace("~~", "ok");
        String hostile = "{\"" + bad + "\":\"v\"," + body.substring(1);

        Answer refused = route.send(hostile);

        assertRefused(refused, route + " with the member name " + bad + ": " + refused);
        assertThat(refused.code()).as(route + " " + refused).isIn("VALIDATION.body", "VALIDATION.malformed_json");
      }
    }
    assertThat(state()).isEqualTo(before);
  }

  @Test
  void rawUtf8OfASurrogateOrAnOverlongNulInABodyIsRefused() {
    Map<String, Long> before = state();
    List<byte[]> inserts = List.of(new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
        new byte[] {(byte) 0xED, (byte) 0xBF, (byte) 0xBF}, new byte[] {(byte) 0xC0, (byte) 0x80},
        new byte[] {(byte) 0xE0, (byte) 0x80, (byte) 0x80});
    for (byte[] insert : inserts) {
      for (JsonRoute route : jsonRoutes()) {
        String body = route.fields.values().iterator().next();
        int at = body.indexOf("~~");
        byte[] head = body.substring(0, at).getBytes(StandardCharsets.UTF_8);
        byte[] tail = body.substring(at + 2).getBytes(StandardCharsets.UTF_8);
        byte[] bytes = new byte[head.length + insert.length + tail.length];
        System.arraycopy(head, 0, bytes, 0, head.length);
        System.arraycopy(insert, 0, bytes, head.length, insert.length);
        System.arraycopy(tail, 0, bytes, head.length + insert.length, tail.length);

        Answer refused = route.send(bytes);

        assertRefused(refused, route + " with raw bytes: " + refused);
      }
    }
    assertThat(state()).isEqualTo(before);
  }

  @Test
  void aQueryStringThatIsNotPercentEncodedUtf8OrHoldsANulIsRefusedWith400() {
    Map<String, Long> before = state();
    List<String> targets = List.of("/ledger?account_id=", "/ledger?limit=10&account_id=", "/ledger/summary?x=",
        "/provider/charges?account_id=", "/admin/idempotency-records?state=", "/admin/idempotency-records?after=",
        "/admin/outbox?type=", "/admin/outbox?cursor=", "/admin/outbox?status=", "/actuator/metrics?tag=",
        "/actuator/health?x=", "/payments/" + "pay_none?x=", "/nowhere?x=", "/ledger?");
    for (String target : targets) {
      for (String value : BAD_QUERY_VALUES) {
        String answer = rawGet(target + value, true);
        String what = "GET " + target + value + ": " + answer;

        assertThat(statusOf(answer)).as(what).isEqualTo(400);
        assertThat(answer).as(what).contains("Content-Type: application/problem+json")
            .contains("\"code\":\"VALIDATION.query\"").contains("\"retryable\":false");
        assertNoSqlText(answer, what);
      }
    }
    assertThat(state()).isEqualTo(before);
  }

  @Test
  void aQueryStringIsCheckedBeforeAuthentication() {
    String answer = rawGet("/ledger?account_id=a%00b", false);

    assertThat(statusOf(answer)).as(answer).isEqualTo(400);
    assertThat(answer).contains("\"code\":\"VALIDATION.query\"");
  }

  @Test
  void wellFormedQueryStringsStillWork() {
    for (String target : List.of("/ledger?account_id=acct_text", "/ledger?account_id=caf%C3%A9+x&limit=5",
        "/ledger?account_id=%F0%9F%98%80", "/ledger?account_id=&limit=1", "/ledger?flag", "/ledger?a=%41%2b")) {
      String answer = rawGet(target, true);

      assertThat(statusOf(answer)).as(target + ": " + answer).isEqualTo(200);
    }
  }

  @Test
  void aFormBodyWithANulOrBrokenEncodingIsRefusedWith400() {
    Map<String, Long> before = state();
    for (String form : List.of("status=dead&type=a%00b", "status=dead&type=%c0", "status=dead&type=%zz",
        "status=dead&ty%00pe=x")) {
      Answer refused = checked(service.send(service.request("/admin/outbox/replay", null)
          .header("Content-Type", "application/x-www-form-urlencoded")
          .POST(HttpRequest.BodyPublishers.ofString(form)).build()));

      assertRefused(refused, form + ": " + refused);
      assertThat(refused.code()).as(form).isEqualTo("VALIDATION.body");
    }
    for (String method : List.of("PUT", "PATCH", "DELETE")) {
      for (String form : List.of("name=%zz", "name=a%00b", "na%c0me=x")) {
        Answer refused = checked(service.send(service.request("/accounts/acct_text", alice.apiKey())
            .header("Content-Type", "application/x-www-form-urlencoded").header("If-Match", "*")
            .method(method, HttpRequest.BodyPublishers.ofString(form)).build()));

        assertThat(refused.status()).as(method + " " + form + ": " + refused).isBetween(400, 499);
        assertThat(refused.header("Content-Type")).as(method + " " + form).isEqualTo("application/problem+json");
      }
    }
    assertThat(state()).isEqualTo(before);
  }

  @Test
  void aNulOrBadEncodingInThePathIsRefusedWithoutSqlText() {
    for (String path : List.of("/accounts/a%00b", "/payments/pay%00x", "/refunds/%c0", "/payments/%zz",
        "/provider/charges/ch%00", "/admin/outbox/%00")) {
      String answer = rawGet(path, true);

      assertThat(statusOf(answer)).as(path + ": " + answer).isBetween(400, 499);
      assertNoSqlText(answer, path);
    }
  }

  /**
   * A bounded random run: requests to every route that reads text, with hostile text mixed into random fields and
   * query parameters. None gets a 5xx, every refusal is a problem document, and no answer holds SQL error text.
   */
  @Test
  void randomHostileTextNeverGetsA5xxOrSqlText() {
    long seed = new Random().nextLong();
    Random r = new Random(seed);
    List<String> pieces = List.of("\\u0000", "\\ud800", "\\udfff", "\\ud83d\\ude00", "caf\u00e9", "\u2603", "a",
        "_", "\\\"", "\\\\", "\\n", "\\u001f", "\\u007f", "\\ufffe", "\\uffff", "%00", "%zz", "'", ";--", "\\t");
    List<String> queryPieces = List.of("%00", "%c0", "%zz", "%", "%41", "a", "%C3%A9", "%ed%a0%80", "+", "%2B", "'",
        "%27", "%3B", "%e2%98%83");
    List<String> queryTargets = List.of("/ledger?account_id=", "/provider/charges?account_id=", "/admin/outbox?type=",
        "/admin/idempotency-records?state=", "/ledger?limit=");
    List<JsonRoute> routes = jsonRoutes();
    for (int i = 0; i < RANDOM_REQUESTS; i++) {
      String what;
      int status;
      String text;
      if (r.nextInt(4) == 0) {
        StringBuilder value = new StringBuilder();
        for (int n = r.nextInt(4); n >= 0; n--) {
          value.append(queryPieces.get(r.nextInt(queryPieces.size())));
        }
        String target = queryTargets.get(r.nextInt(queryTargets.size())) + value;
        text = rawGet(target, true);
        status = statusOf(text);
        what = "seed " + seed + ", GET " + target + ": " + text;
        if (status >= 400) {
          assertThat(text).as(what).contains("Content-Type: application/problem+json");
        }
      } else {
        JsonRoute route = routes.get(r.nextInt(routes.size()));
        List<String> bodies = new ArrayList<>(route.fields.values());
        StringBuilder value = new StringBuilder();
        for (int n = r.nextInt(4); n >= 0; n--) {
          value.append(pieces.get(r.nextInt(pieces.size())));
        }
        String body = bodies.get(r.nextInt(bodies.size())).replace("~~", value);
        Answer answer = route.send(body);
        status = answer.status();
        text = answer.text();
        what = "seed " + seed + ", " + route + " " + body + ": " + answer;
        if (status >= 400) {
          assertThat(answer.header("Content-Type")).as(what).isEqualTo("application/problem+json");
          assertThat(answer.json().path("retryable").asBoolean()).as(what).isFalse();
        }
      }
      assertThat(status).as(what).isBetween(200, 499);
      assertNoSqlText(text, what);
    }
  }

  // ---------------------------------------------------------------- routes

  /** A route that reads a JSON body, and bodies for it with {@code ~~} where the hostile text goes, per field. */
  private final class JsonRoute {
    final String method;
    final String path;
    final boolean idempotent;
    final boolean authenticated;
    final String precondition;
    final Map<String, String> fields = new LinkedHashMap<>();

    JsonRoute(String method, String path, boolean idempotent, boolean authenticated, String precondition) {
      this.method = method;
      this.path = path;
      this.idempotent = idempotent;
      this.authenticated = authenticated;
      this.precondition = precondition;
    }

    JsonRoute field(String name, String body) {
      fields.put(name, body);
      return this;
    }

    Answer send(String body) {
      return send(body.getBytes(StandardCharsets.UTF_8));
    }

    Answer send(byte[] body) {
      HttpRequest.Builder b = service.request(path, authenticated ? alice.apiKey() : null)
          .header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofByteArray(body));
      if (idempotent) {
        b.header("Idempotency-Key", UUID.randomUUID().toString());
      }
      if (precondition != null) {
        b.header(precondition.substring(0, precondition.indexOf(':')),
            precondition.substring(precondition.indexOf(':') + 1));
      }
      return checked(service.send(b.build()));
    }

    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  private List<JsonRoute> jsonRoutes() {
    return List.of(
        new JsonRoute("POST", "/payments", true, true, null)
            .field("description", "{\"account_id\":\"acct_text\",\"amount\":1,\"currency\":\"EUR\",\"description\":"
                + "\"~~\"}")
            .field("account_id", "{\"account_id\":\"~~\",\"amount\":1,\"currency\":\"EUR\"}")
            .field("currency", "{\"account_id\":\"acct_text\",\"amount\":1,\"currency\":\"~~\"}"),
        new JsonRoute("POST", "/refunds", true, true, null)
            .field("payment_id", "{\"payment_id\":\"" + paymentId + "~~\",\"amount\":1}"),
        new JsonRoute("PUT", "/accounts/acct_text", false, true, "If-Match:*")
            .field("name", "{\"name\":\"~~\",\"email\":\"a@example.com\"}")
            .field("email", "{\"name\":\"A\",\"email\":\"~~\"}")
            .field("metadata", "{\"name\":\"A\",\"email\":\"a@example.com\",\"metadata\":{\"k\":\"~~\"}}"),
        new JsonRoute("PATCH", "/payments/" + paymentId, false, true, "If-Match:*")
            .field("description", "{\"description\":\"~~\"}")
            .field("metadata", "{\"metadata\":{\"order\":\"~~\"}}"),
        new JsonRoute("POST", "/webhook-endpoints", false, true, null)
            .field("url", "{\"url\":\"http://127.0.0.1:9/~~\",\"events\":[\"*\"]}")
            .field("events", "{\"url\":\"http://127.0.0.1:9/hook\",\"events\":[\"~~\"]}"),
        new JsonRoute("POST", "/provider/charges", true, false, null)
            .field("account_id", "{\"account_id\":\"acct~~\",\"amount\":1,\"currency\":\"EUR\"}")
            .field("currency", "{\"account_id\":\"acct_text\",\"amount\":1,\"currency\":\"~~\"}"),
        new JsonRoute("POST", "/provider/refunds", true, false, null)
            .field("charge_id", "{\"charge_id\":\"" + chargeId + "~~\",\"amount\":1}"));
  }

  // ---------------------------------------------------------------- helpers

  private Answer send(String method, String path, String header, String value, String json) {
    return service.send(service.request(path, alice.apiKey()).header("Content-Type", "application/json")
        .header(header, value).method(method, HttpRequest.BodyPublishers.ofString(json)).build());
  }

  /** The answer, after checking that it holds no SQL error text. */
  static Answer checked(Answer answer) {
    assertNoSqlText(answer.text(), answer.toString());
    return answer;
  }

  static void assertNoSqlText(String answer, String what) {
    for (String sql : SQL_TEXT) {
      assertThat(answer).as("SQL error text in " + what).doesNotContain(sql);
    }
  }

  private static void assertRefused(Answer refused, String what) {
    assertThat(refused.status()).as(what).isEqualTo(400);
    assertThat(refused.header("Content-Type")).as(what).isEqualTo("application/problem+json");
    assertThat(refused.json().path("retryable").isBoolean()).as(what).isTrue();
    assertThat(refused.json().path("retryable").asBoolean()).as(what).isFalse();
  }

  /** A GET on a socket of its own: the target as written, which {@code java.net.URI} would refuse. */
  private String rawGet(String target, boolean authenticated) {
    String head = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        + (authenticated ? "Authorization: Bearer " + alice.apiKey() + "\r\n" : "") + "\r\n";
    String answer = service.raw(head, new ByteArrayInputStream(new byte[0]));
    assertNoSqlText(answer, "GET " + target);
    return answer;
  }

  private static int statusOf(String answer) {
    Matcher m = Pattern.compile("^HTTP/1\\.1 (\\d{3}) ").matcher(answer);
    assertThat(m.find()).as("an HTTP answer: " + answer).isTrue();
    return Integer.parseInt(m.group(1));
  }

  /** The provider's counters and the row count of every table: what a refusal must not change. */
  private Map<String, Long> state() {
    Map<String, Long> state = new LinkedHashMap<>();
    checked(service.get("/admin/provider/stats", null)).json().properties()
        .forEach(e -> state.put("provider " + e.getKey(), e.getValue().asLong()));
    for (String table : OversizedInputTest.TABLES) {
      state.put(table, service.count("SELECT COUNT(*) FROM " + table));
    }
    return state;
  }
}
