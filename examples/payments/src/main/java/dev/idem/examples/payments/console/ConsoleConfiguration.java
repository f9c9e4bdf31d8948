package dev.idem.examples.payments.console;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.examples.payments.PaymentsConfiguration;
import dev.idem.examples.payments.auth.AdminAccess;
import dev.idem.jdbc.JdbcIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The console's wiring: the filter that serves its files, which runs before the authentication filter because the
 * page itself needs no credentials, and the admin-key check on its routes under {@code /admin/console}, which ignores
 * the loopback exemption of the other admin routes (see {@link ConsoleAccess} for why).
 */
@Configuration(proxyBeanMethods = false)
public class ConsoleConfiguration implements WebMvcConfigurer {
  /** Before the authentication filter, which would ask the page for an API key. */
  static final int ASSETS_ORDER = PaymentsConfiguration.AUTHENTICATION_ORDER - 10;

  private final ConsoleAccess access;

  public ConsoleConfiguration(@Value("${payments.admin-key:sk_admin}") String adminKey) {
    this.access = new ConsoleAccess(new AdminAccess(adminKey, false));
  }

  @Bean
  FilterRegistrationBean<ConsoleAssets> consoleAssets() {
    FilterRegistrationBean<ConsoleAssets> registration = new FilterRegistrationBean<>(ConsoleAssets.fromClasspath());
    registration.setName("consoleAssets");
    registration.addUrlPatterns("/console", "/console/*");
    registration.setOrder(ASSETS_ORDER);
    return registration;
  }

  @Bean
  RecordSearch recordSearch(IdempotencyStore store) {
    if (!(store instanceof JdbcIdempotencyStore)) {
      throw new IllegalStateException("the console searches records by key in the JDBC store's table, but store '"
          + store.name() + "' is a " + store.getClass().getName());
    }
    return new RecordSearch((JdbcIdempotencyStore) store);
  }

  @Bean
  ConsoleMetrics consoleMetrics(MeterRegistry registry) {
    return new ConsoleMetrics(registry);
  }

  @Override
  public void addInterceptors(InterceptorRegistry registry) {
    registry.addInterceptor(access).addPathPatterns("/admin/console", "/admin/console/**");
  }
}
