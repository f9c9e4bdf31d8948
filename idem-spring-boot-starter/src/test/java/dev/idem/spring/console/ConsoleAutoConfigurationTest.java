package dev.idem.spring.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.console.ConsoleServlet;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link IdemConsoleAutoConfiguration}'s defaults, properties and validation in an application that configures
 * nothing else ({@link BareApp}, on H2).
 */
class ConsoleAutoConfigurationTest {

  private static ConfigurableApplicationContext start(String... more) {
    String[] args = {"--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:console-auto-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.store.initialize-schema=true", "--idem.outbox.initialize-schema=true"};
    String[] all = new String[args.length + more.length];
    System.arraycopy(args, 0, all, 0, args.length);
    System.arraycopy(more, 0, all, args.length, more.length);
    return new SpringApplicationBuilder(BareApp.class).run(all);
  }

  private static ServletRegistrationBean<?> registration(ConfigurableApplicationContext context) {
    return context.getBean(IdemConsoleAutoConfiguration.REGISTRATION_BEAN, ServletRegistrationBean.class);
  }

  @Test
  void withoutAnAuthorizerTheConsoleIsMountedAtTheDefaultPathAndRefusesEveryone() throws Exception {
    try (ConfigurableApplicationContext context = start()) {
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      HttpResponse<String> session = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + port + "/idem/console/api/session"))
          .header("Authorization", "Bearer anything-at-all-123").build(),
          HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));

      assertThat(registration(context).getUrlMappings()).containsExactly("/idem/console/*");
      assertThat(registration(context).getServlet().toString()).contains("ConsoleAuthorizer.refuseAll()");
      assertThat(((ConsoleServlet) registration(context).getServlet()).allowedHosts())
          .containsExactlyInAnyOrder("localhost", "127.0.0.1", "[::1]");
      assertThat(session.statusCode()).isEqualTo(403);
      assertThat(session.body()).contains("CONSOLE.not_configured", "ConsoleAuthorizer bean");
    }
  }

  @Test
  void thePropertiesSetThePathAndTheHosts() {
    try (ConfigurableApplicationContext context = start("--idem.console.path=/ops/idem",
        "--idem.console.allowed-hosts=ops.example.com,[::1]")) {
      assertThat(registration(context).getUrlMappings()).containsExactly("/ops/idem/*");
      assertThat(((ConsoleServlet) registration(context).getServlet()).allowedHosts())
          .containsExactlyInAnyOrder("ops.example.com", "[::1]");
    }
  }

  @Test
  void theConsoleIsOffWhenDisabled() {
    try (ConfigurableApplicationContext context = start("--idem.console.enabled=false")) {
      assertThat(context.containsBean(IdemConsoleAutoConfiguration.REGISTRATION_BEAN)).isFalse();
    }
  }

  @Test
  void badSettingsStopTheStartNamingTheProperty() {
    assertThatThrownBy(() -> start("--idem.console.path=/ops/")).rootCause()
        .hasMessageContaining("idem.console.path").hasMessageContaining("'/ops/'");
    assertThatThrownBy(() -> start("--idem.console.allowed-hosts=ops.example.com:8443")).rootCause()
        .hasMessageContaining("ops.example.com:8443");
    assertThatThrownBy(() -> start("--idem.console.search-max-scanned=0")).rootCause()
        .hasMessageContaining("idem.console.search-max-scanned");
  }
}
