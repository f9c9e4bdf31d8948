package dev.idem.spring.deadline;

import dev.idem.servlet.deadline.DeadlineFilter;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Registers {@link DeadlineFilter} in servlet web applications, before the idempotency filter (an expired request
 * must not create a record). On by default ({@code idem.server.deadline.enabled}): without a {@code Request-Timeout}
 * header it changes nothing, it refuses only requests whose client has already given up, and it is what lets
 * idem-client calls made by handlers inherit the caller's deadline. Turn it off where a proxy in front already uses
 * that header for something else. Also off with {@code idem.enabled=false}.
 */
@AutoConfiguration
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DeadlineFilter.class)
@ConditionalOnProperty(prefix = "idem", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemDeadlineProperties.class)
public class IdemDeadlineAutoConfiguration {
  /** The bean name of the filter registration; define a bean with this name to replace it. */
  public static final String REGISTRATION_BEAN = "idemDeadlineFilter";

  /** The filter itself, unless {@code idem.server.deadline.enabled=false}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "idem.server.deadline", name = "enabled", havingValue = "true",
      matchIfMissing = true)
  static class FilterRegistration {

    @Bean(name = REGISTRATION_BEAN)
    @ConditionalOnMissingBean(name = REGISTRATION_BEAN)
    FilterRegistrationBean<DeadlineFilter> idemDeadlineFilter(IdemDeadlineProperties properties,
        Environment environment) {
      int idempotencyOrder = environment.getProperty("idem.filter.order", Integer.class, 0);
      properties.validate(idempotencyOrder);
      DeadlineFilter filter = DeadlineFilter.builder().header(properties.getHeader()).max(properties.getMax())
          .minRemaining(properties.getMinRemaining()).build();
      FilterRegistrationBean<DeadlineFilter> registration = new FilterRegistrationBean<>(filter);
      registration.setName(REGISTRATION_BEAN);
      registration.setOrder(properties.effectiveOrder(idempotencyOrder));
      registration.setDispatcherTypes(DispatcherType.REQUEST);
      registration.addUrlPatterns("/*");
      return registration;
    }
  }
}
