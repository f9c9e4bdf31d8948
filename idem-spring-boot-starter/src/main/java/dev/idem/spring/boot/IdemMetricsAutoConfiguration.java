package dev.idem.spring.boot;

import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.spring.internal.InProgressGauges;
import dev.idem.spring.internal.MicrometerListener;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Idem's meters when Micrometer and a {@link MeterRegistry} bean are present: the executor's, the completer's and
 * the store's ({@link MicrometerListener}, which the {@code Idem} bean receives as a listener) and the gauges of
 * records in progress ({@link InProgressGauges}, when the store is a {@link JdbcIdempotencyStore} bean; refreshed at
 * most every {@code idem.metrics.in-progress-refresh}). Every meter is tagged {@code instance} = {@code idem.name}.
 * The retry meters are {@link dev.idem.spring.retry.RetryMeters}, the outbox's
 * {@link dev.idem.spring.outbox.OutboxMetrics}.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class,
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnProperty(prefix = "idem", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemProperties.class)
public class IdemMetricsAutoConfiguration {

  @Bean
  @ConditionalOnBean(MeterRegistry.class)
  MicrometerListener idemMicrometerListener(MeterRegistry registry, IdemProperties properties) {
    properties.validate();
    return new MicrometerListener(registry, properties.getName());
  }

  @Bean
  @ConditionalOnBean({MeterRegistry.class, JdbcIdempotencyStore.class})
  InProgressGauges idemInProgressGauges(MeterRegistry registry, JdbcIdempotencyStore store,
      IdemProperties properties, ObjectProvider<Clock> clock) {
    properties.validate();
    return new InProgressGauges(registry, properties.getName(), store, clock.getIfAvailable(Clock::systemUTC),
        properties.getMetrics().getInProgressRefresh());
  }
}
