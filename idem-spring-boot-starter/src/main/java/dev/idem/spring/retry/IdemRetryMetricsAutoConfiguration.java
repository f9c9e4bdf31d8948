package dev.idem.spring.retry;

import dev.idem.retry.Retry;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * A {@link RetryMeters} bean when the application has idem-retry, Micrometer and a {@link MeterRegistry}: the
 * application gives it to its {@link Retry} instances ({@code retry.withListener(retryMeters)}) and binds its circuit
 * breakers ({@code retryMeters.bind(breaker)}). Its {@code instance} tag is {@code idem.name}. Off with
 * {@code idem.enabled=false}; an application's own {@link RetryMeters} bean replaces it.
 */
@AutoConfiguration(
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({Retry.class, MeterRegistry.class})
@ConditionalOnBooleanProperty(name = "idem.enabled", matchIfMissing = true)
public class IdemRetryMetricsAutoConfiguration {

  /** The retry meters, tagged with {@code idem.name} (default {@code idem}). */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean(MeterRegistry.class)
  public RetryMeters idemRetryMeters(MeterRegistry registry, Environment environment) {
    return new RetryMeters(registry, environment.getProperty("idem.name", "idem"));
  }
}
