package dev.idem.examples.payments.security;

import dev.idem.examples.payments.PaymentsApplication;
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
 * The payments service started in this JVM on a free port, with an HTTP client and a raw socket to talk to it (the
 * security tests send what {@code java.net.http} refuses to build). Close it to stop it.
 */
final class RunningPayments implements AutoCloseable {
  private final ConfigurableApplicationContext context;
  private final int port;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10)).build();

  private RunningPayments(ConfigurableApplicationContext context) {
    this.context = context;
    this.port = ((WebServerApplicationContext) context).getWebServer().getPort();
  }

  /**
   * Starts the service with these arguments, and defaults for those it does not set: a free port, quiet logs, the
   * webhook sinks on 127.0.0.1 allowed and a short relay poll.
   */
  static RunningPayments start(String... args) {
    List<String> all = new ArrayList<>();
    for (String fallback : List.of("--server.port=0", "--logging.level.root=WARN", "--logging.level.dev.idem=INFO",
        "--spring.main.banner-mode=off", "--payments.webhooks.allow-private-addresses=true",
        "--payments.outbox.poll-interval=50ms")) {
      String name = fallback.substring(0, fallback.indexOf('=') + 1);
      if (Arrays.stream(args).noneMatch(a -> a.startsWith(name))) {
        all.add(fallback);
      }
    }
    all.addAll(List.of(args));
    return new RunningPayments(new SpringApplicationBuilder(PaymentsApplication.class).run(all.toArray(String[]::new)));
  }

  DataSource dataSource() {
    return context.getBean(DataSource.class);
  }

  int port() {
    return port;
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  /** POST a JSON body; {@code apiKey} and {@code idempotencyKey} are left out when null. */
  Reply post(String path, String apiKey, String idempotencyKey, String json) {
    HttpRequest.Builder b = request(path, apiKey).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (idempotencyKey != null) {
      b.header("Idempotency-Key", idempotencyKey);
    }
    return send(b.build());
  }

  Reply put(String path, String apiKey, String json) {
    return send(request(path, apiKey).header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build());
  }

  Reply get(String path, String apiKey) {
    return send(request(path, apiKey).GET().build());
  }

  Reply send(HttpRequest request) {
    try {
      HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      return new Reply(r.statusCode(), r.headers(), r.body());
    } catch (IOException e) {
      throw new IllegalStateException(request.method() + " " + request.uri() + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** A request with {@code Authorization: Bearer <apiKey>} unless the key is null. */
  HttpRequest.Builder request(String path, String apiKey) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60));
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    return b;
  }

  /**
   * Writes {@code head} (the request line and headers, ending with an empty line) and then {@code body} on a socket of
   * its own, closes the output if the server has not already, and answers everything the server sent until it closed
   * the connection. The body is written on another thread so that a server that answers early is heard.
   */
  String raw(String head, InputStream body) {
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
  long count(String sql, Object... params) {
    try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
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

  @Override
  public void close() {
    context.close();
  }
}
