package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * The admin routes' loopback exemption and forwarded headers exclude each other: the check reads
 * {@code server.forward-headers-strategy} as Spring Boot does (any case, and unset on a cloud platform that trusts its
 * proxy's headers by itself means {@code native}). {@link dev.idem.examples.payments.security.ForwardedLoopbackTest}
 * shows the refusal at a real start.
 */
class AdminLoopbackSettingsTest {
  @Test
  void aStrategyThatAppliesForwardedHeadersIsRefusedWithTheExemptionOn() {
    for (String strategy : new String[] {"framework", "FRAMEWORK", "native", "Native"}) {
      assertThatThrownBy(() -> check(true, Map.of("server.forward-headers-strategy", strategy))).as(strategy)
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("payments.admin-allow-loopback=false");
      assertThatCode(() -> check(false, Map.of("server.forward-headers-strategy", strategy))).as(strategy)
          .doesNotThrowAnyException();
    }
  }

  @Test
  void anUnsetStrategyOnACloudPlatformThatUsesForwardedHeadersIsRefused() {
    assertThatThrownBy(() -> check(true, Map.of("spring.main.cloud-platform", "kubernetes")))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("KUBERNETES");
    assertThatCode(() -> check(true, Map.of("spring.main.cloud-platform", "kubernetes",
        "server.forward-headers-strategy", "none"))).doesNotThrowAnyException();
    assertThatCode(() -> check(true, Map.of("spring.main.cloud-platform", "none"))).doesNotThrowAnyException();
    assertThatCode(() -> check(true, Map.of())).doesNotThrowAnyException();
  }

  private static void check(boolean allowLoopback, Map<String, Object> properties) {
    StandardEnvironment environment = new StandardEnvironment();
    environment.getPropertySources().addFirst(new MapPropertySource("test", new HashMap<>(properties)));
    PaymentsConfiguration.refuseLoopbackExemptionWithForwardedHeaders(allowLoopback, environment);
  }
}
