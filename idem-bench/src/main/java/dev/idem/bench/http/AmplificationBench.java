package dev.idem.bench.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.client.IdempotentHttpClient;
import dev.idem.client.Intent;
import dev.idem.client.IntentPendingException;
import dev.idem.client.Response;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.retry.Backoff;
import dev.idem.retry.RetryBudget;
import dev.idem.retry.RetryPolicy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Retry amplification across layers (BENCHMARKS.md): a driver calls service A, A calls B, B calls C, all on
 * 127.0.0.1. C fails every request (503) during a window in the middle of the run. Counts the attempts that reach C
 * per top-level request, inside the window and overall, in two set-ups:
 *
 * <ul>
 *   <li>naive: every layer (driver, A, B) retries any 5xx or I/O failure, 3 attempts, no delay;
 *   <li>idem: every layer uses {@link IdempotentHttpClient} (3 attempts, no delay, a token-bucket budget per
 *       destination), and a service whose downstream call failed after its own retries answers 503 with
 *       {@code retryable: false}, so the layers above do not retry.
 * </ul>
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.http.AmplificationBench [--requests 300]
 * </pre>
 */
public final class AmplificationBench {
  /** The start of a 503 problem body: the code, without its end. */
  private static final String UNAVAILABLE = "{\"code\":\"" + ProblemCode.DEPENDENCY_UNAVAILABLE + "\"";

  private AmplificationBench() {}

  /** One way of calling the next layer: true when the answer was a success. */
  private interface Caller {
    boolean call(URI uri) throws IOException, InterruptedException;
  }

  public static void main(String[] args) throws Exception {
    int requests = 300;
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (args[i].equals("--requests")) {
        requests = Integer.parseInt(args[i + 1]);
      } else {
        System.err.println("usage: AmplificationBench [--requests N]");
        System.exit(2);
      }
    }
    System.out.println("| set-up | top-level requests | attempts at C | per request | in the failure window | per"
        + " request in the window |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (String mode : new String[] {"naive", "idem"}) {
      run(mode, requests);
    }
  }

  private static void run(String mode, int requests) throws Exception {
    AtomicLong attemptsAtC = new AtomicLong();
    AtomicBoolean failing = new AtomicBoolean();
    HttpServer c = server(exchange -> {
      attemptsAtC.incrementAndGet();
      answer(exchange, failing.get() ? 503 : 200, failing.get()
          ? UNAVAILABLE + ",\"retryable\":true}" : "{\"ok\":true}");
    });
    boolean idem = mode.equals("idem");
    Caller bToC = caller(idem);
    Caller aToB = caller(idem);
    HttpServer b = server(exchange -> forward(exchange, bToC, uri(c, "/c"), idem));
    HttpServer a = server(exchange -> forward(exchange, aToB, uri(b, "/b"), idem));
    Caller driver = caller(idem);
    try {
      long windowAttempts = 0;
      int windowRequests = 0;
      for (int i = 0; i < requests; i++) {
        boolean inWindow = i >= requests / 4 && i < 3 * requests / 4;
        failing.set(inWindow);
        long before = attemptsAtC.get();
        driver.call(uri(a, "/a"));
        if (inWindow) {
          windowAttempts += attemptsAtC.get() - before;
          windowRequests++;
        }
      }
      System.out.println(String.format(Locale.ROOT, "| %s | %d | %d | %.2f | %d | %.2f |", mode, requests,
          attemptsAtC.get(), attemptsAtC.get() / (double) requests, windowAttempts,
          windowAttempts / (double) windowRequests));
    } finally {
      a.stop(0);
      b.stop(0);
      c.stop(0);
    }
  }

  /** The layer's handler: call the next layer; answer 200, or 503 (with retryable: false in the idem set-up). */
  private static void forward(HttpExchange exchange, Caller next, URI uri, boolean idem) throws IOException {
    exchange.getRequestBody().readAllBytes();
    boolean ok;
    try {
      ok = next.call(uri);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ok = false;
    } catch (IOException | RuntimeException e) {
      ok = false;
    }
    if (ok) {
      answer(exchange, 200, "{\"ok\":true}");
    } else {
      answer(exchange, 503, idem ? UNAVAILABLE + ",\"retryable\":false}" : UNAVAILABLE + "}");
    }
  }

  private static Caller caller(boolean idem) {
    return idem ? idemCaller() : naiveCaller();
  }

  private static Caller naiveCaller() {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    return uri -> {
      for (int attempt = 1; attempt <= 3; attempt++) {
        try {
          HttpResponse<Void> r = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.discarding());
          if (r.statusCode() < 500) {
            return r.statusCode() < 300;
          }
        } catch (IOException e) {
          // retried, as naive clients do
        }
      }
      return false;
    };
  }

  private static Caller idemCaller() {
    IdempotentHttpClient client = IdempotentHttpClient.builder().name("amplification")
        .httpClient(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build())
        .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).noDeadline().build())
        .budgetPerDestination(() -> RetryBudget.tokenBucket(10, 0.1))
        .headers(() -> Map.of("Content-Type", "application/json"))
        .sleeper(d -> { })
        .build();
    return uri -> {
      try {
        Response r = client.send(Intent.post(uri, "{}".getBytes(StandardCharsets.UTF_8)));
        return r.status() < 300;
      } catch (IntentPendingException e) {
        return false;
      }
    };
  }

  private interface Handler {
    void handle(HttpExchange exchange) throws IOException;
  }

  private static HttpServer server(Handler handler) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      try {
        handler.handle(exchange);
      } finally {
        exchange.close();
      }
    });
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.start();
    return server;
  }

  private static URI uri(HttpServer server, String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  private static void answer(HttpExchange exchange, int status, String json) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type",
        status >= 400 ? "application/problem+json" : "application/json");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
