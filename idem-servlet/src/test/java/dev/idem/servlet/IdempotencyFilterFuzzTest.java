package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Fuzzes the filter's handling of hostile requests over real HTTP (embedded Jetty, H2 store; see {@link TestService}):
 * odd methods and paths, missing, repeated, quoted, oversized and non-ASCII keys, hostile header names and values,
 * bodies of random bytes in random content types and charsets, chunked or not, malformed chunking. No request gets a
 * 5xx, and a refused one (4xx) leaves no row, and no record unless the handler answered it (then the record is kept,
 * {@code Idempotency-Status: stored}, and is the only new row). {@link PostgresIdempotencyFilterFuzzTest} runs the
 * same requests on PostgreSQL, which refuses a NUL in text. The key parser on its own is fuzzed in idem-core
 * ({@code IdempotencyKeyFuzzTest}).
 */
@AddLifecycleHook(FuzzTries.class)
class IdempotencyFilterFuzzTest {
  private static TestService service;

  @BeforeContainer
  static void start() throws Exception {
    service = new TestService(TestService.DB_H2, b -> b);
  }

  @AfterContainer
  static void stop() throws Exception {
    service.close();
  }

  @Property(tries = 3_000)
  void hostileRequestsNeverGetA5xxAndARefusedOneLeavesNothing(@ForAll("requests") HostileRequest request)
      throws Exception {
    check(service, request);
  }

  @Provide
  Arbitrary<HostileRequest> requests() {
    return hostileRequests();
  }

  /** Sends the request to the service and checks its answer and the rows it left. */
  static void check(TestService service, HostileRequest request) throws Exception {
    long before = rows(service);

    String answer = send(service, request.bytes);
    int status = Integer.parseInt(answer.substring(9, 12));

    Statistics.collect(status / 100 + "xx");
    Statistics.coverage(c -> {
      c.check("2xx").percentage(p -> p >= 5);
      c.check("4xx").percentage(p -> p >= 20);
    });
    assertThat(status).as("status of the answer %s", answer).isBetween(200, 499);
    if (status >= 400) {
      boolean kept = answer.contains("\r\nIdempotency-Status: stored\r\n");
      assertThat(rows(service)).as("rows after a %d (kept: %s)", status, kept).isEqualTo(before + (kept ? 1 : 0));
    }
  }

  /** Hostile requests, each from a random seed. */
  static Arbitrary<HostileRequest> hostileRequests() {
    return Arbitraries.longs().map(seed -> HostileRequest.generate(new Random(seed)));
  }

  /** Records and rows of every table the service writes. */
  private static long rows(TestService service) throws SQLException {
    long n = 0;
    try (Connection c = service.dataSource.getConnection(); Statement st = c.createStatement()) {
      for (String table : List.of("idem_servlet_record", "servlet_order", "servlet_payment")) {
        try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
          rs.next();
          n += rs.getLong(1);
        }
      }
    }
    return n;
  }

  /** Sends raw bytes and returns the final answer (after any 100 Continue). */
  private static String send(TestService service, byte[] request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", service.port)) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(request);
      out.flush();
      // no half-close: every request says "Connection: close" and is framed so that the server never waits for more;
      // a half-close lets a server take the request for abandoned and close without answering (seen once in 10^4)
      InputStream in = socket.getInputStream();
      String answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      int at = 0;
      while (true) {
        assertThat(answer.startsWith("HTTP/1.", at)).as("a status line at %d in %s", at, answer).isTrue();
        if (answer.charAt(at + 9) != '1') {
          return answer.substring(at, Math.min(answer.length(), at + 2000));
        }
        at = answer.indexOf("\r\n\r\n", at) + 4;
      }
    }
  }

  /** A raw HTTP/1.1 request; {@link #toString()} shows it with bytes outside printable ASCII escaped. */
  static final class HostileRequest {
    private static final String[] METHODS = {"POST", "POST", "POST", "POST", "PUT", "PATCH", "DELETE", "GET"};
    private static final String[] PATHS = {
      "/orders", "/orders", "/orders", "/notes", "/payments", "/orders?b=2&a=1", "/orders?a=%ZZ&&=", "/orders/",
      "//orders", "/orders;p=1", "/%6Frders", "/orders/../orders", "/nowhere", "/orders?x=%00",
    };
    private static final String[] TENANTS = {"Bearer alice", "Bearer alice", "Bearer bob", null, "Bearer mallory",
      "Basic YWxpY2U6", "Bearer  alice", "bearer alice"};
    private static final String[] CONTENT_TYPES = {
      "application/json", "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-16",
      "application/json; charset=nonsense", "application/json; charset=\"utf-8\"", "APPLICATION/JSON",
      "application/merge-patch+json", "text/plain", "application/octet-stream", "application/x-www-form-urlencoded",
      "application/x-www-form-urlencoded; charset=nonsense", "application/x-www-form-urlencoded;charset=ISO-8859-1",
      "multipart/form-data; boundary=x", " multipart/mixed", "", ";;;", "application/", "*/*", "text/json",
      "application/json; charset=utf-8; charset=latin1", "application/vnd.acme+json; q=\"\\\"\"",
    };
    private static final String[] POOL_KEYS = {"fuzz-1", "fuzz-2", "fuzz-3", "\"fuzz-1\""};

    final byte[] bytes;

    private HostileRequest(byte[] bytes) {
      this.bytes = bytes;
    }

    /**
     * A third of the requests are well formed but for one thing; the rest are hostile throughout. Bodies and framing
     * always agree, so the server never waits for bytes that will not come.
     */
    static HostileRequest generate(Random r) {
      boolean wellFormed = r.nextInt(3) == 0;
      int odd = r.nextInt(7);
      boolean[] wild = new boolean[7];
      for (int i = 0; i < wild.length; i++) {
        wild[i] = !wellFormed || i == odd;
      }
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      String method = wild[0] ? METHODS[r.nextInt(METHODS.length)] : "POST";
      String path = wild[1] ? PATHS[r.nextInt(PATHS.length)] : "/orders";
      String version = wild[1] && r.nextInt(5) == 0 ? "HTTP/1.0" : "HTTP/1.1";
      ascii(head, method + " " + path + " " + version + "\r\n");
      ascii(head, "Host: 127.0.0.1\r\nConnection: close\r\n");
      String tenant = wild[2] ? TENANTS[r.nextInt(TENANTS.length)] : "Bearer alice";
      if (tenant != null) {
        ascii(head, "Authorization: " + tenant + "\r\n");
      }
      int keys = !wild[3] || r.nextInt(10) < 7 ? 1 : r.nextInt(3) * 2;
      for (int i = 0; i < keys; i++) {
        ascii(head, wild[3] && r.nextInt(8) == 0 ? "idempotency-key:" : "Idempotency-Key: ");
        head.writeBytes(wild[3] ? key(r) : ("k-" + Long.toHexString(r.nextLong())).getBytes(StandardCharsets.US_ASCII));
        ascii(head, "\r\n");
      }
      if (!wild[4] || r.nextInt(5) > 0) {
        ascii(head, "Content-Type: " + (wild[4] ? CONTENT_TYPES[r.nextInt(CONTENT_TYPES.length)] : "application/json")
            + "\r\n");
      }
      for (int i = wild[5] ? r.nextInt(3) : 0; i > 0; i--) {
        hostileHeader(head, r);
      }
      byte[] body = wild[6] ? body(r) : ("{\"item\":\"" + Long.toHexString(r.nextLong()) + "\"}")
          .getBytes(StandardCharsets.UTF_8);
      switch (wild[6] ? r.nextInt(8) : 7) {
        case 0:
        case 1:
          ascii(head, "Transfer-Encoding: chunked\r\n\r\n");
          chunked(head, body, r);
          break;
        case 2:
          if (body.length == 0) {
            ascii(head, "\r\n");
            break;
          }
          // a chunk size that is not hexadecimal, then a proper end, so the server never waits for more
          ascii(head, "Transfer-Encoding: chunked\r\n\r\n" + (r.nextBoolean() ? "zz" : "-1") + "\r\n");
          head.writeBytes(body);
          ascii(head, "\r\n0\r\n\r\n");
          break;
        default:
          ascii(head, "Content-Length: " + body.length + "\r\n\r\n");
          head.writeBytes(body);
      }
      return new HostileRequest(head.toByteArray());
    }

    private static byte[] key(Random r) {
      switch (r.nextInt(9)) {
        case 0:
          return POOL_KEYS[r.nextInt(POOL_KEYS.length)].getBytes(StandardCharsets.US_ASCII);
        case 1:
          return ("\"k-" + r.nextLong() + "\"").getBytes(StandardCharsets.US_ASCII);
        case 2:
          return new byte[0];
        case 3:
          return "a".repeat(250 + r.nextInt(r.nextBoolean() ? 10 : 9000)).getBytes(StandardCharsets.US_ASCII);
        case 4:
          return ("caf\u00e9-" + r.nextInt(1000) + "\u2603").getBytes(r.nextBoolean() ? StandardCharsets.UTF_8
              : StandardCharsets.ISO_8859_1);
        case 5:
          return randomBytes(r, 1 + r.nextInt(20), false);
        case 6:
          return (" k-" + r.nextLong() + "\t").getBytes(StandardCharsets.US_ASCII);
        default:
          return ("k-" + Long.toHexString(r.nextLong()) + Long.toHexString(r.nextLong()))
              .getBytes(StandardCharsets.US_ASCII);
      }
    }

    private static void hostileHeader(ByteArrayOutputStream head, Random r) {
      String[] names = {"X-Fuzz", "Content-Encoding", "Expect", "Accept-Charset", "X-\u00e9", "Idempotency-Key ",
        "Content-Type", "X-Long", "Cookie"};
      String name = names[r.nextInt(names.length)];
      byte[] value;
      switch (name) {
        case "Content-Encoding":
          value = (r.nextBoolean() ? "gzip" : "br, identity, nonsense").getBytes(StandardCharsets.US_ASCII);
          break;
        case "Expect":
          value = "100-continue".getBytes(StandardCharsets.US_ASCII);
          break;
        case "X-Long":
          value = "x".repeat(r.nextInt(12_000)).getBytes(StandardCharsets.US_ASCII);
          break;
        default:
          value = randomBytes(r, r.nextInt(40), false);
      }
      head.writeBytes(name.getBytes(StandardCharsets.UTF_8));
      ascii(head, ": ");
      head.writeBytes(value);
      ascii(head, "\r\n");
    }

    private static byte[] body(Random r) {
      byte[] body;
      switch (r.nextInt(8)) {
        case 0:
          body = new byte[0];
          break;
        case 1:
        case 2:
          body = ("{\"item\":\"" + Long.toHexString(r.nextLong()) + "\",\"qty\":" + r.nextInt(100) + "}")
              .getBytes(StandardCharsets.UTF_8);
          break;
        case 3:
          body = ("{\"item\":\"caf\u00e9\",\"qty\":" + r.nextInt(9) + "}").getBytes(r.nextBoolean()
              ? StandardCharsets.UTF_16 : StandardCharsets.ISO_8859_1);
          break;
        case 4:
          body = ("item=" + r.nextInt() + "&qty=%" + (r.nextBoolean() ? "ZZ" : "41") + "&&=&%E9")
              .getBytes(StandardCharsets.ISO_8859_1);
          break;
        case 5:
          body = randomBytes(r, TestService.MAX_REQUEST_BYTES - 2 + r.nextInt(r.nextBoolean() ? 5 : 4000), true);
          break;
        default:
          body = randomBytes(r, r.nextInt(300), true);
      }
      // the test handler changes behaviour on a "mode" member; keep its switches out of random bodies
      return new String(body, StandardCharsets.ISO_8859_1).contains("mode") ? new byte[0] : body;
    }

    private static void chunked(ByteArrayOutputStream out, byte[] body, Random r) {
      int at = 0;
      while (at < body.length) {
        int n = Math.min(body.length - at, 1 + r.nextInt(700));
        ascii(out, Integer.toHexString(n) + (r.nextInt(6) == 0 ? ";ext=1" : "") + "\r\n");
        out.write(body, at, n);
        ascii(out, "\r\n");
        at += n;
      }
      ascii(out, "0\r\n\r\n");
    }

    private static byte[] randomBytes(Random r, int n, boolean anyByte) {
      byte[] b = new byte[n];
      for (int i = 0; i < n; i++) {
        if (anyByte) {
          b[i] = (byte) r.nextInt(256);
        } else {
          // anything but CR and LF, which would end the header line
          int x = r.nextInt(254);
          b[i] = (byte) (x >= '\n' ? x >= '\r' - 1 ? x + 2 : x + 1 : x);
        }
      }
      return b;
    }

    private static void ascii(ByteArrayOutputStream out, String s) {
      out.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < Math.min(bytes.length, 3000); i++) {
        int b = bytes[i] & 0xff;
        if (b == '\n') {
          sb.append("\\n\n");
        } else if (b == '\r') {
          sb.append("\\r");
        } else if (b < 0x20 || b > 0x7e) {
          sb.append(String.format("\\x%02x", b));
        } else {
          sb.append((char) b);
        }
      }
      return sb.append(bytes.length > 3000 ? "... (" + bytes.length + " bytes)" : "").toString();
    }
  }
}
