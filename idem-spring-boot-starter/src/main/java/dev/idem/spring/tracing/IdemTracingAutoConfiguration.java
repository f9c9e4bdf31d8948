package dev.idem.spring.tracing;

import dev.idem.spring.boot.IdemAutoConfiguration;
import io.opentelemetry.api.trace.Span;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Idem's span attributes when the OpenTelemetry API is on the class path: an {@link OpenTelemetryListener} bean
 * (which the {@code Idem} bean picks up with every other {@code IdemListener} bean) and, in a servlet web
 * application, its {@link AttemptHeaderFilter}, ordered just before the idempotency filter ({@code idem.filter.order}
 * minus one). When {@code idem.filter.order} is {@link Integer#MIN_VALUE} nothing is lower and both filters get that
 * order: Spring Boot keeps filters of equal order in the order of their registration beans, and this
 * auto-configuration runs before {@link IdemAutoConfiguration}, so the attempt filter still runs first.
 * {@code idem.tracing.enabled=false} turns it off, and so does {@code idem.enabled=false}. It adds no tracer: see
 * {@link OpenTelemetryListener} for what the application brings.
 */
@AutoConfiguration(before = IdemAutoConfiguration.class)
@ConditionalOnClass(Span.class)
@ConditionalOnBooleanProperty(name = "idem.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "idem.tracing.enabled", matchIfMissing = true)
public class IdemTracingAutoConfiguration {

  /** The listener; an application's own bean of this type replaces it. */
  @Bean
  @ConditionalOnMissingBean
  public OpenTelemetryListener idemOpenTelemetryListener() {
    return new OpenTelemetryListener();
  }

  /** The attempt header, in servlet web applications. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  static class Web {

    @Bean
    FilterRegistrationBean<AttemptHeaderFilter> idemAttemptHeaderFilter(OpenTelemetryListener listener,
        Environment environment) {
      int idempotencyOrder = environment.getProperty("idem.filter.order", Integer.class, 0);
      FilterRegistrationBean<AttemptHeaderFilter> registration =
          new FilterRegistrationBean<>(new AttemptHeaderFilter(listener));
      registration.setName("idemAttemptHeaderFilter");
      registration.setOrder(idempotencyOrder == Integer.MIN_VALUE ? idempotencyOrder : idempotencyOrder - 1);
      registration.setDispatcherTypes(DispatcherType.REQUEST);
      registration.addUrlPatterns("/*");
      return registration;
    }
  }
}
