package dev.idem.spring.boot;

import dev.idem.core.Idem;
import dev.idem.core.PhasedOperation;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.internal.AnnotatedRoutes;
import dev.idem.spring.internal.InProgressGauges;
import dev.idem.spring.internal.MicrometerListener;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Idem's meters when Micrometer and a {@link MeterRegistry} bean are present: the executor's, the completer's and
 * the store's ({@link MicrometerListener}, which the {@code Idem} bean receives as a listener) and the gauges of
 * records in progress ({@link InProgressGauges}, refreshed at most every {@code idem.metrics.in-progress-refresh}).
 * Every meter is tagged {@code instance} = {@code idem.name}. The retry meters are
 * {@link dev.idem.spring.retry.RetryMeters}, the outbox's {@link dev.idem.spring.outbox.OutboxMetrics}.
 *
 * <p>The gauges of records in progress count the records of the application's one {@link JdbcIdempotencyStore} bean
 * (or its {@code @Primary} one); with several stores and none primary there are no such gauges (an application that
 * wants them builds an {@link InProgressGauges} per store, each with its own instance name).
 *
 * <p>Once every bean is created, the counters of the operations known then (those of the {@code @Idempotent} routes
 * and of the {@link PhasedOperation} beans) are registered at zero under the {@code Idem} bean's name, so that a query
 * or an alert on them sees 0 rather than no data before the first event
 * ({@link MicrometerListener#registerOperation}). Operations an application runs only through {@code Idem} calls of
 * its own appear with their first event.
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

  /** The gauges of the one (or the primary) JDBC store; closed, with their reading thread, with the context. */
  @Bean
  @ConditionalOnBean(MeterRegistry.class)
  @ConditionalOnSingleCandidate(JdbcIdempotencyStore.class)
  InProgressGauges idemInProgressGauges(MeterRegistry registry, JdbcIdempotencyStore store,
      IdemProperties properties, ObjectProvider<Clock> clock) {
    properties.validate();
    return new InProgressGauges(registry, properties.getName(), store, clock.getIfAvailable(Clock::systemUTC),
        properties.getMetrics().getInProgressRefresh());
  }

  /** Registers the known operations' counters at zero once the {@code Idem} bean and the routes are there. */
  @Bean
  @ConditionalOnBean(MeterRegistry.class)
  SmartInitializingSingleton idemOperationMeters(ObjectProvider<MicrometerListener> meters,
      ObjectProvider<Idem> idems, ObjectProvider<PhasedOperation> phased, ListableBeanFactory beans,
      IdemProperties properties) {
    return () -> {
      MicrometerListener listener = meters.getIfUnique();
      Idem idem = idems.getIfUnique();
      if (listener == null || idem == null) {
        return;
      }
      for (AnnotatedRoutes.Entry entry : AnnotatedRoutes.scan(beans,
          IdemAutoConfiguration.defaults(properties))) {
        listener.registerOperation(idem.name(), entry.route().operation().name(), entry.route().mode());
      }
      phased.orderedStream().forEach(p -> listener.registerOperation(idem.name(), p.operation().name(),
          IdempotentRoute.Mode.PHASED));
    };
  }
}
