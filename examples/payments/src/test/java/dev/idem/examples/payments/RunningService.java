package dev.idem.examples.payments;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
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
import java.util.Arrays;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The payments service started in this JVM on a free port, with an HTTP client and a raw socket to talk to it (for
 * what {@code java.net.http} refuses to build). Close it to stop it.
 */
public final class RunningService implements AutoCloseable {
  private final ConfigurableApplicationContext context;
  private final int port;
  private final URI base;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10)).build();

  private RunningService(ConfigurableApplicationContext context) {
    this.context = context;
    this.port = ((WebServerApplicationContext) context).getWebServer().getPort();
    this.base = URI.create("http://127.0.0.1:" + port);
  }

  /** Starts the service with these arguments, plus a free port and quiet logs unless the arguments set them. */
  public static RunningService start(String... args) {
    List<String> all = new ArrayList<>();
    for (String fallback : List.of("--server.port=0", "--server.address=127.0.0.1", "--logging.level.root=WARN",
        "--logging.level.dev.idem=INFO",
        "--spring.main.banner-mode=off",
        // the tests' webhook sinks listen on 127.0.0.1
        "--payments.webhooks.allow-private-addresses=true")) {
      String name = fallback.substring(0, fallback.indexOf('=') + 1);
      if (Arrays.stream(args).noneMatch(a -> a.startsWith(name))) {
        all.add(fallback);
      }
    }
    all.addAll(List.of(args));
    return new RunningService(new SpringApplicationBuilder(PaymentsApplication.class).run(all.toArray(String[]::new)));
  }

  ConfigurableApplicationContext context() {
    return context;
  }

  /** The service's data source, the pool it runs on. */
  public DataSource dataSource() {
    return context.getBean(DataSource.class);
  }

  /** The port the service listens on. */
  int port() {
    return port;
  }

  /** The address of {@code path} on the service. */
  public URI uri(String path) {
    return base.resolve(path);
  }

  /** POST a JSON body; {@code apiKey} and {@code idempotencyKey} are left out when null. */
  public Answer post(String path, String apiKey, String idempotencyKey, String json) {
    HttpRequest.Builder b = request(path, apiKey).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (idempotencyKey != null) {
      b.header("Idempotency-Key", idempotencyKey);
    }
    return send(b.build());
  }

  /** PUT a JSON body; {@code apiKey} is left out when null. */
  public Answer put(String path, String apiKey, String json) {
    return send(request(path, apiKey).header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build());
  }

  /** GET; {@code apiKey} is left out when null. */
  public Answer get(String path, String apiKey) {
    return send(request(path, apiKey).GET().build());
  }

  /** Sends a request and answers what the service replied. */
  public Answer send(HttpRequest request) {
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

  /** A request with {@code Authorization: Bearer <apiKey>} unless the key is null. */
  public HttpRequest.Builder request(String path, String apiKey) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60));
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    return b;
  }

  /**
   * Writes {@code head} (the request line and headers, ending with an empty line) and then {@code body} on a socket of
   * its own, closes the output if the server has not already, and answers everything the server sent until it closed
   * the connection. The body is written on another thread so that a server that answers early is heard; that thread
   * is interrupted once the answer is complete, so a body that blocks (a client that stalls) ends there.
   */
  public String raw(String head, InputStream body) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(60_000);
      OutputStream out = socket.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      Thread writer = new Thread(() -> {
        try (InputStream in = body) {
          in.transferTo(out);
          out.flush();
          socket.shutdownOutput();
        } catch (IOException e) {
          // the server answered and closed the connection before the whole body was sent: what these tests want
        }
      }, "raw-body-writer");
      writer.setDaemon(true);
      writer.start();
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      try {
        socket.getInputStream().transferTo(answer);
      } catch (IOException e) {
        // a reset after the answer: keep what arrived
      }
      writer.interrupt();
      writer.join(60_000);
      return answer.toString(StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      throw new IllegalStateException("raw request to 127.0.0.1:" + port + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** The single number a query answers, run on the service's own pool. */
  public long count(String sql, Object... params) {
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
