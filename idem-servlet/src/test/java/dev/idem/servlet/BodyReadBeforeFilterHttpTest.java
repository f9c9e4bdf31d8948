package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.Scope;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A request body that something before the idempotency filter read. A form's fields are then taken from the request's
 * parameters, as the container parsed them (a filter asked for a parameter, as a CSRF filter does) or as a wrapper
 * gives them (one that parsed the form, as Spring's {@code FormContentFilter} does): the handler sees them, the same
 * fields in another order replay, other fields are a mismatch. Any other body read before, and a form whose fields
 * are not to be had, is refused 500 {@code INTERNAL.body_read_before_filter}, and nothing runs. On H2 with Jetty and
 * on PostgreSQL with Tomcat.
 */
class BodyReadBeforeFilterHttpTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  /** How the filter before the idempotency filter reads the body: {@code parameter}, {@code form-wrapper}, ... */
  private static final String READ = "X-Read-Body";

  /**
   * Reads the body as the request's {@value #READ} header says: {@code parameter} asks for a parameter,
   * {@code form-wrapper} reads and parses the form and passes a request that gives its fields, {@code stream} reads
   * the stream to its end, {@code reader} the reader.
   */
  private static Filter bodyReader() {
    return (req, res, chain) -> {
      HttpServletRequest request = (HttpServletRequest) req;
      String how = request.getHeader(READ);
      if ("parameter".equals(how)) {
        request.getParameter("csrf");
      } else if ("form-wrapper".equals(how)) {
        req = new FormWrapper(request, new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      } else if ("stream".equals(how)) {
        request.getInputStream().readAllBytes();
      } else if ("reader".equals(how)) {
        request.getReader().transferTo(java.io.Writer.nullWriter());
      }
      chain.doFilter(req, res);
    };
  }

  /** What Spring's {@code FormContentFilter} passes on: the form's fields after the query's, the stream read. */
  private static final class FormWrapper extends HttpServletRequestWrapper {
    private final Map<String, String[]> parameters = new LinkedHashMap<>();

    FormWrapper(HttpServletRequest request, String form) {
      super(request);
      Map<String, List<String>> merged = new LinkedHashMap<>();
      request.getParameterMap().forEach((name, values) -> merged.computeIfAbsent(name, k -> new ArrayList<>())
          .addAll(List.of(values)));
      for (String pair : form.split("&")) {
        int eq = pair.indexOf('=');
        merged.computeIfAbsent(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            k -> new ArrayList<>()).add(URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
      merged.forEach((name, values) -> parameters.put(name, values.toArray(String[]::new)));
    }

    @Override
    public String getParameter(String name) {
      String[] values = parameters.get(name);
      return values == null ? null : values[0];
    }

    @Override
    public Map<String, String[]> getParameterMap() {
      return Collections.unmodifiableMap(parameters);
    }

    @Override
    public Enumeration<String> getParameterNames() {
      return Collections.enumeration(parameters.keySet());
    }

    @Override
    public String[] getParameterValues(String name) {
      return parameters.get(name);
    }
  }

  private static HttpResponse<String> post(TestService service, String read, String key, String contentType,
      String body) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create(service.url("/orders?qty=2")))
          .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer alice").header(READ, read)
          .header("Content-Type", contentType).header("Idempotency-Key", key)
          .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static boolean recorded(TestService service, String key) {
    return service.store.find(new RecordKey(Scope.of("alice"), Operation.of("POST /orders"), IdempotencyKey.of(key)))
        .isPresent();
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void aFormReadBeforeReachesTheHandlerAndIsFingerprintedByItsFields(String db, String container) throws Exception {
    try (TestService service = new TestService(db, container, List.of(bodyReader()), b -> b)) {
      for (String read : List.of("parameter", "form-wrapper")) {
        String key = "form-read-" + read + "-" + UUID.randomUUID();
        // Tomcat decodes a form without a charset as ISO-8859-1 (Spring Boot's encoding filter sets UTF-8)
        String form = "application/x-www-form-urlencoded; charset=UTF-8";

        HttpResponse<String> first = post(service, read, key, form, "csrf=t1&item=l%C3%A4mp&note=a+b");
        HttpResponse<String> reordered = post(service, read, key, form, "note=a+b&item=l%C3%A4mp&csrf=t1");
        HttpResponse<String> other = post(service, read, key, form, "csrf=t1&item=desk&note=a+b");
        HttpResponse<String> notRead = post(service, "none", key, form, "csrf=t1&item=l%C3%A4mp&note=a+b");

        assertThat(first.statusCode()).as(read + ": " + first.body()).isEqualTo(201);
        assertThat(first.body()).as(read).isEqualTo("item=l\u00e4mp qty=2");
        assertThat(first.headers().firstValue("Idempotency-Status")).hasValue("stored");
        assertThat(reordered.headers().firstValue("Idempotency-Status")).as(read).hasValue("replayed");
        assertThat(reordered.body()).isEqualTo(first.body());
        assertThat(other.statusCode()).as(read + ": " + other.body()).isEqualTo(422);
        assertThat(other.body()).contains("CONFLICT.idempotency.payload_mismatch");
        assertThat(notRead.headers().firstValue("Idempotency-Status"))
            .as(read + ": the same form in canonical order, not read before, is the same request").hasValue("replayed");
      }
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void anyOtherBodyReadBeforeIsRefusedAsTheServersFaultAndNothingRuns(String db, String container)
      throws Exception {
    try (TestService service = new TestService(db, container, List.of(bodyReader()), b -> b)) {
      List<List<String>> cases = List.of(List.of("stream", "application/json", "{\"item\":\"book\"}"),
          List.of("reader", "application/json", "{\"item\":\"book\"}"),
          List.of("stream", "text/plain", "book"),
          List.of("stream", "application/x-www-form-urlencoded", "item=book"));
      for (List<String> c : cases) {
        String key = "body-read-" + UUID.randomUUID();

        HttpResponse<String> r = post(service, c.get(0), key, c.get(1), c.get(2));

        assertThat(r.statusCode()).as(c + ": " + r.body()).isEqualTo(500);
        assertThat(r.body()).contains("\"code\":\"INTERNAL.body_read_before_filter\"", "\"retryable\":false",
            "before the idempotency filter");
        assertThat(r.headers().allValues("Idempotency-Key")).containsExactly(key);
        assertThat(r.headers().firstValue("Idempotency-Status")).isEmpty();
        assertThat(recorded(service, key)).as(c + ": no record").isFalse();
        assertThat(service.orders("alice", key)).isZero();
      }
    }
  }
}
