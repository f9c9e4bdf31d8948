package dev.idem.spring.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.servlet.budget.RetryBudgetFilter;
import dev.idem.spring.budget.app.BudgetApp;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/** The starter's retry budget in a running Spring Boot application over real HTTP: properties, order, meters. */
class RetryBudgetStarterTest {
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static ConfigurableApplicationContext start(String... properties) {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--idem.name=budget-test", "--management.endpoints.web.exposure.include=health,prometheus"));
    args.addAll(List.of(properties));
    return new SpringApplicationBuilder(BudgetApp.class).run(args.toArray(String[]::new));
  }

  private HttpResponse<String> send(ConfigurableApplicationContext context, String method, String path,
      Integer attempt) throws Exception {
    int port = ((WebServerApplicationContext) context).getWebServer().getPort();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30))
        .method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString("{}"))
        .header("Content-Type", "application/json");
    if (attempt != null) {
      b.header("Idempotency-Attempt", attempt.toString());
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  @Test
  void budgetIsOffByDefault() throws Exception {
    try (ConfigurableApplicationContext context = start()) {
      HttpResponse<String> retry = send(context, "POST", "/checkout", 4);

      assertThat(context.getBeanNamesForType(RetryBudgetFilter.class)).isEmpty();
      assertThat(retry.body()).contains("DEPENDENCY.unavailable");
    }
  }

  @Test
  void shedsRetriesPastTheShareBeforeTheHandlerAndExportsItsMeters() throws Exception {
    try (ConfigurableApplicationContext context = start("--idem.server.retry-budget.enabled=true",
        "--idem.server.retry-budget.max-retry-share=0.25", "--idem.server.retry-budget.min-requests=0",
        "--idem.server.retry-budget.retry-after=3s", "--idem.server.retry-budget.path-prefixes=/checkout")) {
      for (int i = 0; i < 3; i++) {
        send(context, "POST", "/checkout", null);
      }
      HttpResponse<String> admitted = send(context, "POST", "/checkout", 2); // 1 of 4 = 25 %
      int handledBefore = BudgetApp.HANDLED.get();
      HttpResponse<String> shed = send(context, "POST", "/checkout", 3);
      HttpResponse<String> shedAgain = send(context, "POST", "/checkout", 2);
      HttpResponse<String> otherPath = send(context, "GET", "/hello", 4);
      HttpResponse<String> scrape = send(context, "GET", "/actuator/prometheus", null);

      assertThat(admitted.body()).contains("DEPENDENCY.unavailable");
      assertThat(shed.statusCode()).isEqualTo(503);
      assertThat(shed.headers().firstValue("Retry-After")).hasValue("3");
      assertThat(shed.body()).contains("\"code\":\"TRANSIENT.retry_budget_exhausted\"").contains("\"retryable\":false");
      assertThat(shedAgain.body()).contains("TRANSIENT.retry_budget_exhausted");
      assertThat(BudgetApp.HANDLED.get()).as("refused retries never reached the handler").isEqualTo(handledBefore);
      assertThat(otherPath.statusCode()).isEqualTo(200);

      MeterRegistry registry = context.getBean(MeterRegistry.class);
      assertThat(registry.get(RetryBudgetMeters.SHED).tag("instance", "budget-test").functionCounter().count())
          .isEqualTo(2.0);
      assertThat(registry.get(RetryBudgetMeters.ADMITTED).tag("instance", "budget-test").functionCounter().count())
          .isEqualTo(1.0);
      assertThat(registry.get(RetryBudgetMeters.SHARE).tag("instance", "budget-test").gauge().value())
          .isEqualTo(0.25);
      assertThat(scrape.body()).contains("idem_server_retries_shed_total{instance=\"budget-test\"} 2.0")
          .contains("idem_server_retries_admitted_total{instance=\"budget-test\"} 1.0")
          .contains("idem_server_retry_share{instance=\"budget-test\"} 0.25");

      FilterRegistrationBean<?> registration =
          context.getBean("idemRetryBudgetFilterRegistration", FilterRegistrationBean.class);
      assertThat(registration.getOrder()).as("after the deadline filter (-10), before the idempotency filter (0)")
          .isEqualTo(RetryBudgetProperties.DEFAULT_OFFSET).isBetween(-9, -1);
      RetryBudgetFilter filter = context.getBean(RetryBudgetFilter.class);
      assertThat(filter.name()).isEqualTo("budget-test");
      assertThat(filter.pathPrefixes()).containsExactly("/checkout");
    }
  }

  @Test
  void badPropertiesFailStartupNamingTheProperty() {
    String on = "--idem.server.retry-budget.enabled=true";

    assertThatThrownBy(() -> start(on, "--idem.server.retry-budget.max-retry-share=1.5").close())
        .rootCause().hasMessageContaining("idem.server.retry-budget.max-retry-share").hasMessageContaining("1.5");
    assertThatThrownBy(() -> start(on, "--idem.server.retry-budget.window=10ms").close())
        .rootCause().hasMessageContaining("idem.server.retry-budget.window");
    assertThatThrownBy(() -> start(on, "--idem.server.retry-budget.path-prefixes=checkout").close())
        .rootCause().hasMessageContaining("idem.server.retry-budget.path-prefixes").hasMessageContaining("checkout");
    assertThatThrownBy(() -> start(on, "--idem.server.retry-budget.order=5").close())
        .rootCause().hasMessageContaining("idem.server.retry-budget.order").hasMessageContaining("idem.filter.order");
  }
}
