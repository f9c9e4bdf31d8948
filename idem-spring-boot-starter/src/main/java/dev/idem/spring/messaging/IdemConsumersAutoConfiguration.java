package dev.idem.spring.messaging;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.spring.internal.AnnotatedBeans;
import dev.idem.spring.internal.ConsumerNames;
import dev.idem.spring.listener.IdemListenersCheckAutoConfiguration;
import dev.idem.spring.listener.IdempotentListener;
import dev.idem.spring.outbox.IdemOutboxAutoConfiguration;
import dev.idem.spring.outbox.IdemOutboxProperties;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
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
 * docs/consumers.md lists the properties. The inbox consumer names of these consumers, of the webhook receivers
 * and of the {@code @IdempotentListener} methods are checked at startup: two entry points sharing one fail the start.
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
  /**
   * Fails the start when two entry points share an inbox consumer name: the consumers of {@code idem.consumers.*},
   * the webhook receivers of {@code idem.outbox.webhooks.receivers.*} and the {@code @IdempotentListener} methods
   * (when they run through the inbox; two methods with one name are the listeners' own check).
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static SmartInitializingSingleton idemConsumerNamesCheck(ListableBeanFactory beans, Environment environment,
      ObjectProvider<IdemOutboxProperties> outbox) {
    return () -> {
      ConsumerNames names = new ConsumerNames();
      IdemConsumersProperties.bind(environment).getConsumers().forEach((name, consumer) -> {
        if (consumer.isEnabled()) {
          names.add(name, IdemConsumersProperties.PREFIX + "." + name);
        }
      });
      IdemOutboxProperties properties = outbox.getIfAvailable();
      if (properties != null && properties.getWebhooks().getReceivers() != null) {
        // receivers may share a consumer on purpose (one sender's events arriving at two endpoints take effect once)
        Set<String> receivers = new HashSet<>();
        properties.getWebhooks().getReceivers().forEach((name, receiver) -> {
          String prefix = "idem.outbox.webhooks.receivers." + name;
          boolean named = receiver.getConsumer() != null && !receiver.getConsumer().isBlank();
          String consumer = named ? receiver.getConsumer() : name;
          if (receivers.add(consumer)) {
            names.add(consumer, named ? prefix + ".consumer" : prefix);
          }
        });
      }
      if (beans.containsBean(IdemListenersCheckAutoConfiguration.INTERCEPTOR)) {
        Set<String> listeners = new HashSet<>();
        for (AnnotatedBeans.Found<IdempotentListener> bean : AnnotatedBeans.find(beans, IdempotentListener.class)) {
          for (Map.Entry<Method, IdempotentListener> e : bean.methods().entrySet()) {
            if (listeners.add(e.getValue().consumer())) {
              names.add(e.getValue().consumer(), "@IdempotentListener on " + bean.type().getName() + "."
                  + e.getKey().getName());
            }
          }
        }
      }
    };
  }

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
