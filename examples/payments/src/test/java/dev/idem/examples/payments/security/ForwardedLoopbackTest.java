package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.examples.payments.RunningService;
import dev.idem.examples.payments.ServiceOfItsOwn;
import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.filter.ForwardedHeaderFilter;

/**
 * Security, on the service's own container (Tomcat): the admin routes' loopback exemption does not hold for a request
 * that came through a proxy, or claims to. A loopback request carrying {@code Forwarded}, {@code X-Forwarded-For},
 * {@code X-Forwarded-Host}, {@code X-Forwarded-Proto}, {@code X-Real-IP} or {@code Via} needs the admin key (a proxy
 * on the same machine makes every caller look local); so does one whose forged {@code X-Forwarded-For: 127.0.0.1} and
 * {@code X-Forwarded-Host: localhost} Spring's {@code ForwardedHeaderFilter} applied and then hid; and the service
 * refuses to start with the exemption on while {@code server.forward-headers-strategy} applies forwarded headers.
 */
class ForwardedLoopbackTest extends ServiceOfItsOwn {
  private final String adminKey = "sk_fwd_admin_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);

  @Override
  protected List<String> arguments() {
    return List.of("--payments.admin-key=" + adminKey, "--payments.outbox.enabled=false");
  }

  @Test
  void aLoopbackCallerWithoutForwardingHeadersIsStillLetIn() {
    assertThat(get(service, "localhost", Map.of(), null)).startsWith("HTTP/1.1 200");
  }

  @Test
  void aLoopbackRequestCarryingAnyForwardingHeaderNeedsTheAdminKey() {
    Map<String, String> headers = Map.of("Forwarded", "for=127.0.0.1;host=localhost",
        "X-Forwarded-For", "127.0.0.1", "X-Forwarded-Host", "localhost", "X-Forwarded-Proto", "http",
        "X-Real-IP", "127.0.0.1", "Via", "1.1 proxy", "x-forwarded-for", "::1");
    headers.forEach((name, value) -> {
      String refused = get(service, "127.0.0.1", Map.of(name, value), null);
      String withKey = get(service, "127.0.0.1", Map.of(name, value), adminKey);

      assertThat(refused).as(name).startsWith("HTTP/1.1 401").contains("AUTH.unauthenticated");
      assertThat(withKey).as(name + " with the admin key").startsWith("HTTP/1.1 200");
    });
  }

  @Test
  void forgedForwardedHeadersAppliedByForwardedHeaderFilterDoNotMakeACallerLocal() {
    try (RunningService filtered = RunningService.start(
        "--spring.datasource.url=jdbc:h2:mem:fwd-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--payments.admin-key=" + adminKey, "--payments.outbox.enabled=false",
        "--spring.main.sources=" + ForwardedHeaders.class.getName())) {
      String publicHost = get(filtered, "payments.example.com", Map.of(), null);
      String forged = get(filtered, "payments.example.com",
          Map.of("X-Forwarded-For", "127.0.0.1", "X-Forwarded-Host", "localhost"), null);
      String forgedWithKey = get(filtered, "payments.example.com",
          Map.of("X-Forwarded-For", "127.0.0.1", "X-Forwarded-Host", "localhost"), adminKey);

      assertThat(publicHost).as("a host other than loopback's needs the key").startsWith("HTTP/1.1 401");
      assertThat(forged).as("the filter hides the forged headers it applied").startsWith("HTTP/1.1 401")
          .contains("AUTH.unauthenticated");
      assertThat(forgedWithKey).startsWith("HTTP/1.1 200");
    }
  }

  @Test
  void theLoopbackExemptionWithAForwardHeadersStrategyIsRefusedAtStartup() {
    assertThatThrownBy(() -> RunningService.start(
        "--spring.datasource.url=jdbc:h2:mem:fwd-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--payments.admin-key=" + adminKey, "--payments.outbox.enabled=false",
        "--server.forward-headers-strategy=framework").close())
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("payments.admin-allow-loopback=true")
        .hasMessageContaining("server.forward-headers-strategy=framework")
        .hasMessageContaining("payments.admin-allow-loopback=false");
  }

  @Test
  void aForwardHeadersStrategyStartsWithoutTheLoopbackExemptionAndThenNeedsTheKey() {
    try (RunningService proxied = RunningService.start(
        "--spring.datasource.url=jdbc:h2:mem:fwd-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--payments.admin-key=" + adminKey, "--payments.outbox.enabled=false",
        "--payments.admin-allow-loopback=false", "--server.forward-headers-strategy=framework")) {
      assertThat(get(proxied, "localhost", Map.of(), null)).startsWith("HTTP/1.1 401");
      assertThat(get(proxied, "localhost", Map.of(), adminKey)).startsWith("HTTP/1.1 200");
    }
  }

  /** {@code GET /admin/faults} with this {@code Host} and these headers, and the admin key unless it is null. */
  private static String get(RunningService target, String host, Map<String, String> headers, String key) {
    StringBuilder head = new StringBuilder("GET /admin/faults HTTP/1.1\r\nHost: ").append(host)
        .append("\r\nConnection: close\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    if (key != null) {
      head.append("Authorization: Bearer ").append(key).append("\r\n");
    }
    return target.raw(head.append("\r\n").toString(), new ByteArrayInputStream(new byte[0]));
  }

  /**
   * Spring's {@code ForwardedHeaderFilter} before everything else, as an application might register it itself; a
   * source of the test's own service only (no {@code @Configuration}, so component scanning passes it by).
   */
  public static class ForwardedHeaders {
    @Bean
    FilterRegistrationBean<ForwardedHeaderFilter> forwardedHeaderFilter() {
      FilterRegistrationBean<ForwardedHeaderFilter> registration =
          new FilterRegistrationBean<>(new ForwardedHeaderFilter());
      registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
      return registration;
    }
  }
}
