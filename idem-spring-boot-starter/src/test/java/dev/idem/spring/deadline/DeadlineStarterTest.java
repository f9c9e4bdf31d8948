package dev.idem.spring.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.spring.deadline.app.DeadlineApp;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/** The deadline filter as the starter registers it, in a running application over real HTTP. */
class DeadlineStarterTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static ConfigurableApplicationContext start(String... extra) {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:deadline-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.store.initialize-schema=true"));
    args.addAll(List.of(extra));
    return new SpringApplicationBuilder(DeadlineApp.class).run(args.toArray(String[]::new));
  }

  private static HttpResponse<String> get(ConfigurableApplicationContext context, String timeout) throws Exception {
    int port = ((WebServerApplicationContext) context).getWebServer().getPort();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/deadline"))
        .timeout(Duration.ofSeconds(30));
    if (timeout != null) {
      b.header("Request-Timeout", timeout);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void onByDefaultBeforeTheIdempotencyFilter() throws Exception {
    try (ConfigurableApplicationContext context = start()) {
      HttpResponse<String> budget = get(context, "2000");
      HttpResponse<String> none = get(context, null);
      HttpResponse<String> expired = get(context, "0");

      assertThat(budget.statusCode()).isEqualTo(200);
      assertThat(Long.parseLong(budget.body())).isBetween(1L, 2000L);
      assertThat(none.body()).isEqualTo("none");
      assertThat(expired.statusCode()).isEqualTo(503);
      assertThat(expired.body()).contains("\"code\":\"DEPENDENCY.timeout\"").contains("\"retryable\":true");
      FilterRegistrationBean<?> registration =
          context.getBean(IdemDeadlineAutoConfiguration.REGISTRATION_BEAN, FilterRegistrationBean.class);
      assertThat(registration.getOrder()).isEqualTo(-10);
    }
  }

  @Test
  void propertiesConfigureTheFilter() throws Exception {
    try (ConfigurableApplicationContext context = start("--idem.server.deadline.header=X-Budget-Ms",
        "--idem.server.deadline.max=500ms", "--idem.server.deadline.min-remaining=20ms", "--idem.filter.order=5")) {
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      HttpResponse<String> capped = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/deadline")).header("X-Budget-Ms", "60000").build(), HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> tooLittle = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/deadline")).header("X-Budget-Ms", "10").build(), HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> defaultHeaderIgnored = get(context, "0");

      assertThat(Long.parseLong(capped.body())).isBetween(1L, 500L);
      assertThat(tooLittle.statusCode()).isEqualTo(503);
      assertThat(Long.parseLong(defaultHeaderIgnored.body())).isBetween(1L, 500L);
      assertThat(context.getBean(IdemDeadlineAutoConfiguration.REGISTRATION_BEAN, FilterRegistrationBean.class)
          .getOrder()).isEqualTo(-5);
    }
  }

  @Test
  void disabledByProperty() throws Exception {
    try (ConfigurableApplicationContext context = start("--idem.server.deadline.enabled=false")) {
      HttpResponse<String> r = get(context, "0");

      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("none");
      assertThat(context.containsBean(IdemDeadlineAutoConfiguration.REGISTRATION_BEAN)).isFalse();
    }
  }

  @Test
  void badPropertiesFailStartupNamingTheProperty() {
    assertThatThrownBy(() -> start("--idem.server.deadline.min-remaining=-1ms").close())
        .hasStackTraceContaining("idem.server.deadline.min-remaining must be 0ms to 1h, got PT-0.001S");
    assertThatThrownBy(() -> start("--idem.server.deadline.order=0").close())
        .hasStackTraceContaining("idem.server.deadline.order must be lower than idem.filter.order (0)");
  }
}
