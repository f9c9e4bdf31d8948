package dev.idem.spring.messaging;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.spring.outbox.IdemOutboxAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * Idem's inbox consumers from properties, when {@code dev.idem:idem-outbox} is on the classpath: each
 * {@code idem.consumers.<name>.*} (see {@link IdemConsumersProperties}) becomes an {@link InboxConsumerLifecycle}
 * bean, {@code idemConsumer.<name>}, that runs a {@code RabbitMqInboxConsumer}, {@code NatsInboxConsumer} or
 * {@code KafkaInboxConsumer} (each needs its module, idem-rabbitmq, idem-nats or idem-kafka) on the application's
 * {@link Inbox} with the named {@code InboxHandler} bean. Every {@link ConsumerListener} bean hears of every consumer,
 * and {@link ConsumerMetrics} counts when a {@link MeterRegistry} bean exists. With the starter's JDBC inbox, each
 * message is processed in a Spring transaction of the inbox's {@code DataSource} ({@code SpringInboxTransactions}):
 * the handler's {@code JdbcTemplate}, {@code @Transactional} methods (default propagation) and published events join
 * it, and after-commit callbacks run once it has committed. Without {@code idem.consumers.*} it does nothing.
 * docs/consumers.md lists the properties.
 *
 * <pre>{@code
 * idem.consumers.rabbitmq.uri=amqp://shipping:secret@rabbit:5672
 * idem.consumers.shipping.handler=shipOrder
 * idem.consumers.shipping.rabbitmq.queue=orders
 * }</pre>
 */
@AutoConfiguration(after = IdemOutboxAutoConfiguration.class,
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({Inbox.class, ConsumerListener.class})
@Import(ConsumerRegistrar.class)
public class IdemConsumersAutoConfiguration {

  /** The consumers' meters, when Micrometer and a registry are present; tagged {@code instance} with idem.name. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Metrics {
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(MeterRegistry.class)
    ConsumerMetrics consumerMetrics(MeterRegistry registry, Environment environment) {
      return new ConsumerMetrics(registry, environment.getProperty("idem.name", "idem"));
    }
  }
}
