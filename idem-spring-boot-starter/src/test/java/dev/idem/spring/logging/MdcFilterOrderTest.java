package dev.idem.spring.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.spring.logging.CapturedLogs.Line;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Where the MDC filter goes relative to the idempotency filter: unset, always before it whatever
 * {@code idem.filter.order} is (an application that had put the idempotency filter first still starts after the
 * upgrade); set in conflict, a startup failure naming both properties, only when the MDC filter is registered.
 */
class MdcFilterOrderTest {

  private static ConfigurableApplicationContext run(String... more) {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:mdc-order-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.name=mdc-order-test", "--idem.store.initialize-schema=true", "--idem.filter.scope-header=X-Tenant",
        "--logging.level.root=INFO", "--logging.level.dev.idem=DEBUG", "--spring.main.banner-mode=off"));
    args.addAll(List.of(more));
    return new SpringApplicationBuilder(LoggingApp.class).run(args.toArray(String[]::new));
  }

  private static int order(ConfigurableApplicationContext context, String registration) {
    return context.getBean(registration, FilterRegistrationBean.class).getOrder();
  }

  @Test
  void withTheIdempotencyFilterFirstOfAllTheMdcIsStillSetBeforeIt() throws Exception {
    String key = "first-" + UUID.randomUUID();
    try (ConfigurableApplicationContext context = run("--idem.filter.order=" + Integer.MIN_VALUE);
        CapturedLogs logs = CapturedLogs.on("dev.idem")) {
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/notes"))
          .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json").header("X-Tenant", "acme")
          .header("Idempotency-Key", key).header("Idempotency-Attempt", "5")
          .POST(HttpRequest.BodyPublishers.ofString("{\"text\":\"first\"}")).build();

      HttpResponse<String> created = HttpClient.newHttpClient().send(request,
          HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));

      assertThat(created.statusCode()).isEqualTo(201);
      assertThat(order(context, "idemMdcFilter")).as("nothing is lower: the tie is broken by registration order")
          .isEqualTo(order(context, "idempotencyFilter")).isEqualTo(Integer.MIN_VALUE);
      List<Line> transitions = logs.lines().stream()
          .filter(l -> l.message().contains(key) && l.message().contains("ABSENT -> COMPLETED")).toList();
      assertThat(transitions).hasSize(1);
      assertThat(transitions.get(0).mdc()).as("the MDC filter ran before the idempotency filter")
          .containsEntry(IdemMdc.ATTEMPT, "5").containsEntry(IdemMdc.SCOPE, "acme");
    }
  }

  @Test
  void unsetTheOrderFollowsALowIdempotencyFilterOrder() {
    try (ConfigurableApplicationContext low = run("--idem.filter.order=" + (Integer.MIN_VALUE + 20));
        ConfigurableApplicationContext usual = run()) {
      assertThat(order(low, "idemMdcFilter")).isEqualTo(Integer.MIN_VALUE + 19);
      assertThat(order(usual, "idemMdcFilter")).as("before authentication").isEqualTo(Integer.MIN_VALUE + 50);
    }
  }

  @Test
  void anExplicitOrderNotBeforeTheIdempotencyFilterFailsStartupNamingBoth() {
    assertThatThrownBy(() -> run("--idem.logging.mdc.order=0").close())
        .hasStackTraceContaining("idem.logging.mdc.order (0) must be lower than idem.filter.order (0)");
  }

  @Test
  void aConflictingOrderIsNotCheckedWhenTheMdcFilterIsOff() {
    try (ConfigurableApplicationContext context = run("--idem.logging.mdc.order=0",
        "--idem.logging.mdc.enabled=false")) {
      assertThat(context.containsBean("idemMdcFilter")).isFalse();
    }
  }
}
