package dev.idem.spring.outbox;

import dev.idem.outbox.Outbox;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The outbox's and the inbox's meters ({@link OutboxMetrics}) when Micrometer and a {@link MeterRegistry} bean are
 * present. The auto-configured inbox and relay report to it; an application that builds its own {@code Inbox} or
 * {@code OutboxRelay} passes the {@link OutboxMetrics} bean to their builders' {@code listener(...)}. The meters'
 * {@code instance} tag is {@code idem.name}.
 */
@AutoConfiguration(
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({MeterRegistry.class, Outbox.class})
@ConditionalOnProperty(prefix = "idem.outbox", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemOutboxProperties.class)
public class IdemOutboxMetricsAutoConfiguration {

  /** The meters, tagged {@code instance} with {@code idem.name}; the gauges read the unique {@link Outbox} bean. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean(MeterRegistry.class)
  public OutboxMetrics outboxMetrics(MeterRegistry registry, ObjectProvider<Outbox> outbox,
      IdemOutboxProperties properties, Environment environment) {
    properties.validate();
    return new OutboxMetrics(registry, environment.getProperty("idem.name", "idem"), outbox::getIfUnique,
        properties.getMetrics().getStatsRefresh());
  }
}
