package dev.idem.examples.payments.console;

import dev.idem.console.ConsoleAuthorizer;
import dev.idem.console.RecordHints;
import dev.idem.examples.payments.admin.RecordJson;
import dev.idem.examples.payments.auth.AdminAccess;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The operator console of idem-console, which the starter mounts at {@code idem.console.path} ({@code /console} in
 * this service): who may use it. Only {@code Authorization: Bearer <payments.admin-key>} opens it, from loopback
 * callers too.
 *
 * <p>Implementation note: the other admin routes trust loopback callers while {@code payments.admin-allow-loopback}
 * is on, which suits curl on a developer's machine. It does not suit a browser: every page the operator has open is a
 * loopback caller of a service on the same machine, so the console never works without the key. Its sign-in checks
 * the key here ({@code GET /console/api/session}), which is why a tenant's API key is refused even from loopback.
 * The payment-specific part is the hint on uncertain payments and refunds: the provider key to look the call up by.
 */
@Configuration(proxyBeanMethods = false)
public class ConsoleConfiguration {

  /** The admin key, without the loopback exemption; the audit names the operator {@code admin}. */
  @Bean
  ConsoleAuthorizer consoleAuthorizer(@Value("${payments.admin-key:sk_admin}") String adminKey) {
    AdminAccess admin = new AdminAccess(adminKey, false);
    return request -> admin.allows(request) ? ConsoleAuthorizer.Decision.allow("admin")
        : ConsoleAuthorizer.Decision.unauthenticated("the console needs Authorization: Bearer <payments.admin-key>,"
            + " from loopback callers too");
  }

  /** For an uncertain payment or refund, the key its provider call carried ({@link RecordJson#providerKey}). */
  @Bean
  RecordHints consoleHints() {
    return record -> {
      String key = RecordJson.providerKey(record);
      return key == null ? Map.of() : Map.of("provider key", key);
    };
  }
}
