package dev.idem.examples.payments;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The payments service started in this JVM on a free port, and an HTTP client to talk to it. Close it to stop it.
 */
final class RunningService implements AutoCloseable {
  private final ConfigurableApplicationContext context;
  private final URI base;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10)).build();

  private RunningService(ConfigurableApplicationContext context) {
    this.context = context;
    int port = ((WebServerApplicationContext) context).getWebServer().getPort();
    this.base = URI.create("http://127.0.0.1:" + port);
  }

  /** Starts the service with these arguments (plus a free port and quiet logs). */
  static RunningService start(String... args) {
    List<String> all = new ArrayList<>(List.of("--server.port=0", "--logging.level.root=WARN",
        "--logging.level.dev.idem=INFO", "--spring.main.banner-mode=off",
        // the tests' webhook sinks listen on 127.0.0.1
        "--payments.webhooks.allow-private-addresses=true"));
    all.addAll(List.of(args));
    return new RunningService(new SpringApplicationBuilder(PaymentsApplication.class).run(all.toArray(String[]::new)));
  }

  ConfigurableApplicationContext context() {
    return context;
  }

  URI uri(String path) {
    return base.resolve(path);
  }

  /** POST a JSON body; {@code apiKey} and {@code idempotencyKey} are left out when null. */
  Answer post(String path, String apiKey, String idempotencyKey, String json) {
    HttpRequest.Builder b = request(path, apiKey).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (idempotencyKey != null) {
      b.header("Idempotency-Key", idempotencyKey);
    }
    return send(b.build());
  }

  Answer put(String path, String apiKey, String json) {
    return send(request(path, apiKey).header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build());
  }

  Answer get(String path, String apiKey) {
    return send(request(path, apiKey).GET().build());
  }

  Answer send(HttpRequest request) {
    try {
      HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      return new Answer(r.statusCode(), r.headers(), r.body());
    } catch (IOException e) {
      throw new IllegalStateException(request.method() + " " + request.uri() + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  HttpRequest.Builder request(String path, String apiKey) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60));
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    return b;
  }

  /** The single number a query answers, run on the service's own pool. */
  long count(String sql, Object... params) {
    try (Connection c = context.getBean(DataSource.class).getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /** The single text a query answers (null when it finds no row), run on the service's own pool. */
  String text(String sql, Object... params) {
    try (Connection c = context.getBean(DataSource.class).getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    context.close();
  }
}
