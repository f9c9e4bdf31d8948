package dev.idem.spring.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter's span attributes in a running application over real HTTP: the key, the operation, the outcome, the
 * key age and the attempt land on the server span that continues the caller's trace.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TracingStarterTest {
  private static final AttributeKey<String> KEY = AttributeKey.stringKey("idem.idempotency_key");
  private static final AttributeKey<String> OPERATION = AttributeKey.stringKey("idem.operation");
  private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("idem.outcome");
  private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("idem.attempt");
  private static final AttributeKey<Long> KEY_AGE = AttributeKey.longKey("idem.key_age_ms");

  private ConfigurableApplicationContext context;
  private BlockingQueue<SpanData> serverSpans;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private int port;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(TracingApp.class).run("--server.port=0", "--server.address=127.0.0.1",
        "--idem.name=tracing-test", "--idem.store.initialize-schema=true", "--idem.filter.scope-header=X-Tenant",
        "--spring.datasource.url=jdbc:h2:mem:tracing-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
    @SuppressWarnings("unchecked")
    BlockingQueue<SpanData> spans = context.getBean("serverSpans", BlockingQueue.class);
    serverSpans = spans;
  }

  @AfterAll
  void stop() {
    context.close();
  }

  private SpanData pay(String key, String attempt, String traceparent) throws Exception {
    return pay(key, attempt, traceparent, "{\"amount\":5}", 201);
  }

  /** Sends a payment with a client's trace context and returns the server span of that request. */
  private SpanData pay(String key, String attempt, String traceparent, String body, int status) throws Exception {
    serverSpans.clear();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
        .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json").header("X-Tenant", "acme")
        .header("Idempotency-Key", key).header("traceparent", traceparent)
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (attempt != null) {
      b.header("Idempotency-Attempt", attempt);
    }
    HttpResponse<String> response = http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    // the filter adds the span once the request has ended, which may be just after the client has the answer
    SpanData span = serverSpans.poll(60, TimeUnit.SECONDS);
    assertThat(span).as("server span").isNotNull();
    return span;
  }

  private static String randomHex(int bytes) {
    byte[] b = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  @Test
  void theServerSpanCarriesTheKeyTheOutcomeAndTheAttemptFromCreatedToReplayed() throws Exception {
    String key = "pay-" + UUID.randomUUID();
    String traceId = randomHex(16);
    String firstClientSpan = randomHex(8);
    String secondClientSpan = randomHex(8);

    SpanData first = pay(key, "1", "00-" + traceId + "-" + firstClientSpan + "-01");
    SpanData second = pay(key, "2", "00-" + traceId + "-" + secondClientSpan + "-01");

    assertThat(first.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(first.getTraceId()).isEqualTo(traceId);
    assertThat(first.getParentSpanId()).isEqualTo(firstClientSpan);
    assertThat(first.getAttributes().get(KEY)).isEqualTo(key);
    assertThat(first.getAttributes().get(OPERATION)).isEqualTo("POST /payments");
    assertThat(first.getAttributes().get(OUTCOME)).isEqualTo("created");
    assertThat(first.getAttributes().get(ATTEMPT)).isEqualTo(1L);
    assertThat(first.getAttributes().get(KEY_AGE)).isNull();
    assertThat(second.getTraceId()).isEqualTo(traceId);
    assertThat(second.getParentSpanId()).isEqualTo(secondClientSpan);
    assertThat(second.getAttributes().get(KEY)).isEqualTo(key);
    assertThat(second.getAttributes().get(OUTCOME)).isEqualTo("replayed");
    assertThat(second.getAttributes().get(ATTEMPT)).isEqualTo(2L);
    assertThat(second.getAttributes().get(KEY_AGE)).isNotNull().isGreaterThanOrEqualTo(0L);
  }

  @Test
  void aRequestWithoutAnAttemptHeaderHasNoAttemptAttributeAndNoTenantOnTheSpan() throws Exception {
    SpanData span = pay("pay-" + UUID.randomUUID(), null, "00-" + randomHex(16) + "-" + randomHex(8) + "-01");

    assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("created");
    assertThat(span.getAttributes().get(ATTEMPT)).isNull();
    assertThat(span.getAttributes().asMap().values()).map(String::valueOf).noneMatch(v -> v.contains("acme"));
  }

  @Test
  void aKeyReusedForAnotherPaymentIsAMismatchOnTheSpan() throws Exception {
    String key = "pay-" + UUID.randomUUID();
    pay(key, "1", "00-" + randomHex(16) + "-" + randomHex(8) + "-01");

    SpanData reused = pay(key, "1", "00-" + randomHex(16) + "-" + randomHex(8) + "-01", "{\"amount\":6}", 422);

    assertThat(reused.getAttributes().get(KEY)).isEqualTo(key);
    assertThat(reused.getAttributes().get(OUTCOME)).isEqualTo("mismatch");
    assertThat(reused.getAttributes().get(KEY_AGE)).isNull();
  }

  @Test
  void withTheIdempotencyFilterFirstOfAllTheAttemptFilterStillRunsBeforeIt() throws Exception {
    try (ConfigurableApplicationContext first = new SpringApplicationBuilder(TracingApp.class).run("--server.port=0",
        "--server.address=127.0.0.1", "--idem.name=tracing-first", "--idem.store.initialize-schema=true",
        "--idem.filter.scope-header=X-Tenant", "--idem.filter.order=" + Integer.MIN_VALUE,
        "--spring.datasource.url=jdbc:h2:mem:tracing-first-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")) {
      @SuppressWarnings("unchecked")
      BlockingQueue<SpanData> spans = first.getBean("serverSpans", BlockingQueue.class);
      int firstPort = ((WebServerApplicationContext) first).getWebServer().getPort();
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + firstPort + "/payments"))
          .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json").header("X-Tenant", "acme")
          .header("Idempotency-Key", "pay-" + UUID.randomUUID()).header("Idempotency-Attempt", "4")
          .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":5}")).build();

      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      SpanData span = spans.poll(60, TimeUnit.SECONDS);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
      assertThat(first.getBean("idemAttemptHeaderFilter", FilterRegistrationBean.class).getOrder())
          .as("nothing is lower: the tie is broken by registration order").isEqualTo(Integer.MIN_VALUE);
      assertThat(span).as("server span").isNotNull();
      assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("created");
      assertThat(span.getAttributes().get(ATTEMPT)).as("the attempt filter ran first").isEqualTo(4L);
    }
  }

  @Test
  void theListenerAndTheFilterAreThereByDefault() {
    assertThat(context.getBeansOfType(OpenTelemetryListener.class)).hasSize(1);
    assertThat(context.getBean("idemAttemptHeaderFilter")).isNotNull();
  }

  @Test
  void idemTracingEnabledFalseRegistersNothing() {
    try (ConfigurableApplicationContext off = new SpringApplicationBuilder(TracingApp.class)
        .web(WebApplicationType.NONE).run("--idem.tracing.enabled=false", "--idem.store.initialize-schema=true",
            "--spring.datasource.url=jdbc:h2:mem:tracing-off-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")) {
      assertThat(off.getBeansOfType(OpenTelemetryListener.class)).isEmpty();
    }
  }
}
