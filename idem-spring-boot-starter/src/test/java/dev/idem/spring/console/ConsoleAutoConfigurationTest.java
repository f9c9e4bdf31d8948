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
  void thePropertiesSetThePathTheHostsAndTheTrustedOrigins() {
    try (ConfigurableApplicationContext context = start("--idem.console.path=/ops/idem",
        "--idem.console.allowed-hosts=ops.example.com,[::1]",
        "--idem.console.trusted-origins=https://ops.example.com,http://10.0.0.5:8080")) {
      assertThat(registration(context).getUrlMappings()).containsExactly("/ops/idem/*");
      assertThat(((ConsoleServlet) registration(context).getServlet()).allowedHosts())
          .containsExactlyInAnyOrder("ops.example.com", "[::1]");
      assertThat(((ConsoleServlet) registration(context).getServlet()).trustedOrigins())
          .containsExactlyInAnyOrder("https://ops.example.com", "http://10.0.0.5:8080");
    }
  }

  @Test
  void behindAProxyTheOriginPassesWhenTrustedOrForwardedByTheFrameworkAndAForeignOneIsStillRefused()
      throws Exception {
    try (ConfigurableApplicationContext trusted = start("--idem.console.trusted-origins=https://ops.example.com");
        ConfigurableApplicationContext forwarded = start("--server.forward-headers-strategy=framework");
        ConfigurableApplicationContext plain = start()) {
      // past the origin check, the default authorizer refuses: CONSOLE.not_configured, not CONSOLE.cross_site
      assertThat(post(trusted, "https://ops.example.com", false)).contains("CONSOLE.not_configured");
      assertThat(post(trusted, "https://attacker.example", false)).contains("CONSOLE.cross_site");
      assertThat(post(trusted, "https://attacker.example", true)).contains("CONSOLE.cross_site");
      assertThat(post(forwarded, "https://ops.example.com", true)).contains("CONSOLE.not_configured");
      assertThat(post(forwarded, "https://attacker.example", true)).contains("CONSOLE.cross_site");
      assertThat(post(plain, "https://ops.example.com", true)).as("forwarded headers are not read by the console")
          .contains("CONSOLE.cross_site");
    }
  }

  /** A console action as a page on {@code origin} sends it through a proxy that rewrote the Host header. */
  private static String post(ConfigurableApplicationContext context, String origin, boolean forwardedHeaders)
      throws Exception {
    int port = ((WebServerApplicationContext) context).getWebServer().getPort();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
        + "/idem/console/api/outbox/replay?status=dead")).header("Origin", origin).header("X-Idem-Console", "1")
        .POST(HttpRequest.BodyPublishers.noBody());
    if (forwardedHeaders) {
      request.header("X-Forwarded-Host", "ops.example.com").header("X-Forwarded-Proto", "https")
          .header("X-Forwarded-Port", "443");
    }
    HttpResponse<String> answer = HttpClient.newHttpClient().send(request.build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    assertThat(answer.statusCode()).isEqualTo(403);
    return answer.body();
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
    assertThatThrownBy(() -> start("--idem.console.trusted-origins=https://ops.example.com/console"))
        .hasStackTraceContaining("idem.console.trusted-origins").rootCause()
        .hasMessageContaining("'https://ops.example.com/console'");
    assertThatThrownBy(() -> start("--idem.console.search-max-scanned=0")).rootCause()
        .hasMessageContaining("idem.console.search-max-scanned");
  }
}
