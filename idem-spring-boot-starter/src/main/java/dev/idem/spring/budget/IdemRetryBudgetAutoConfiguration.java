package dev.idem.spring.budget;

import dev.idem.servlet.budget.RetryBudgetFilter;
import dev.idem.servlet.budget.RetryBudgetListener;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The server retry budget ({@link RetryBudgetFilter}) when {@code idem.server.retry-budget.enabled=true} in a servlet
 * web application: the filter, registered with {@code idem.server.retry-budget.order} (by default after
 * authentication and the deadline filter, and always before the idempotency filter), every {@link RetryBudgetListener}
 * bean, and
 * {@link RetryBudgetMeters} when a {@link MeterRegistry} exists. It needs no store or DataSource;
 * {@code idem.enabled=false} turns it off with the rest of Idem. An application's own {@link RetryBudgetFilter} bean
 * replaces the configured one.
 */
@AutoConfiguration(
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(RetryBudgetFilter.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "idem.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "idem.server.retry-budget.enabled")
@EnableConfigurationProperties(RetryBudgetProperties.class)
public class IdemRetryBudgetAutoConfiguration {
  private static final System.Logger LOG = System.getLogger(IdemRetryBudgetAutoConfiguration.class.getName());

  @Bean
  @ConditionalOnMissingBean
  public RetryBudgetFilter idemRetryBudgetFilter(RetryBudgetProperties properties, Environment environment,
      ObjectProvider<RetryBudgetListener> listeners) {
    properties.validate();
    RetryBudgetFilter.Builder builder = RetryBudgetFilter.builder()
        .name(environment.getProperty("idem.name", "idem"))
        .maxRetryShare(properties.getMaxRetryShare()).window(properties.getWindow())
        .minRequests(properties.getMinRequests()).attemptHeader(properties.getAttemptHeader())
        .pathPrefixes(properties.getPathPrefixes());
    if (properties.getRetryAfter() != null) {
      builder.retryAfter(properties.getRetryAfter());
    }
    List<RetryBudgetListener> all = listeners.orderedStream().toList();
    if (!all.isEmpty()) {
      builder.listener(all.size() == 1 ? all.get(0) : new RetryBudgetListener() {
        @Override
        public void onRetryAdmitted(String name, int attempt) {
          all.forEach(l -> l.onRetryAdmitted(name, attempt));
        }

        @Override
        public void onRetryShed(String name, int attempt) {
          all.forEach(l -> l.onRetryShed(name, attempt));
        }
      });
    }
    return builder.build();
  }

  @Bean
  public FilterRegistrationBean<RetryBudgetFilter> idemRetryBudgetFilterRegistration(RetryBudgetFilter filter,
      RetryBudgetProperties properties, Environment environment) {
    properties.validate();
    int idempotencyOrder = environment.getProperty("idem.filter.order", Integer.class, 0);
    int order = properties.effectiveOrder(idempotencyOrder);
    if (order >= idempotencyOrder) {
      throw new IllegalStateException("idem.server.retry-budget.order (" + order + ") must be lower"
          + " than idem.filter.order (" + idempotencyOrder + "): retries must be shed before the idempotency filter"
          + " does any work");
    }
    FilterRegistrationBean<RetryBudgetFilter> registration = new FilterRegistrationBean<>(filter);
    registration.setName("idemRetryBudgetFilter");
    registration.setOrder(order);
    registration.setDispatcherTypes(DispatcherType.REQUEST);
    registration.addUrlPatterns("/*");
    LOG.log(System.Logger.Level.INFO, "Idem: server retry budget on: " + filter);
    return registration;
  }

  /** Meters, when Micrometer is present and the application has a registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Metrics {

    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    RetryBudgetMeters idemRetryBudgetMeters(MeterRegistry registry, RetryBudgetFilter filter) {
      return new RetryBudgetMeters(registry, filter);
    }
  }
}
