package dev.idem.bench.http;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * A JDK HTTP server on 127.0.0.1 for the tests: {@code /plain} answers 200, {@code /keyed/...} answers 201 and
 * counts Idempotency-Key headers, {@code /flaky} answers 500 to every third request; every request is recorded.
 */
final class LocalServer implements AutoCloseable {
  record Seen(String path, String method, Map<String, List<String>> headers, String body) {
    String header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null ? null : String.join(",", values);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(8);
  private final Queue<Seen> seen = new ConcurrentLinkedQueue<>();
  private final Map<String, AtomicLong> keyCounts = new ConcurrentHashMap<>();
  private final AtomicLong flakyCalls = new AtomicLong();
  private final AtomicLong flaky500s = new AtomicLong();

  LocalServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/plain", exchange -> answer(exchange, 200));
    server.createContext("/keyed", exchange -> {
      String key = exchange.getRequestHeaders().getFirst(KeyStrategy.HEADER);
      if (key != null) {
        keyCounts.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
      }
      answer(exchange, 201);
    });
    server.createContext("/flaky", exchange -> {
      boolean fail = flakyCalls.incrementAndGet() % 3 == 0;
      if (fail) {
        flaky500s.incrementAndGet();
      }
      answer(exchange, fail ? 500 : 200);
    });
    server.setExecutor(executor);
    server.start();
  }

  String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  List<Seen> seen(String path) {
    return seen.stream().filter(s -> s.path().equals(path)).toList();
  }

  List<Seen> all() {
    return List.copyOf(seen);
  }

  Map<String, Long> keyCounts() {
    return keyCounts.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()));
  }

  long flaky500s() {
    return flaky500s.get();
  }

  private void answer(HttpExchange exchange, int status) throws IOException {
    try {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Headers h = exchange.getRequestHeaders();
      Map<String, List<String>> headers = h.entrySet().stream().collect(Collectors.toMap(
          e -> e.getKey().toLowerCase(Locale.ROOT), e -> List.copyOf(e.getValue()), (a, b) -> a));
      seen.add(new Seen(exchange.getRequestURI().getPath(), exchange.getRequestMethod(), headers, body));
      byte[] response = "{\"ok\":true}".getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, response.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(response);
      }
    } finally {
      exchange.close();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
