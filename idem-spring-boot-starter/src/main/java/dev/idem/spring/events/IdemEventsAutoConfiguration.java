package dev.idem.spring.events;

import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.events.EventSerializer;
import dev.idem.outbox.events.Events;
import dev.idem.spring.internal.TransactionCompletion;
import dev.idem.spring.outbox.IdemOutboxAutoConfiguration;
import dev.idem.spring.outbox.OutboxRoute;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Domain events into the outbox when {@code idem-outbox} is on the classpath and the outbox is auto-configured: an
 * {@link ExternalizedEvents} listener writes every {@link Externalized} event (and every class listed in
 * {@code idem.events.routes}) published through Spring's {@code ApplicationEventPublisher} inside a transaction of
 * the outbox's data source to the outbox in that transaction. Payloads are the application's Jackson
 * {@link ObjectMapper}'s JSON, or an {@link EventSerializer} bean's. Properties: {@link IdemEventsProperties}
 * ({@code idem.events.*}), checked at startup together with every {@code @Externalized} class in the application's
 * packages: a destination whose route no {@link OutboxRoute} bean serves stops the start, naming it, and so does an
 * {@code Outbox} whose JDBC store is on another data source than the one events are written through, and an
 * application with events to write whose listener is not created (no {@code Outbox} bean, several data sources and
 * none {@code @Primary}).
 *
 * <pre>{@code
 * @Externalized(value = "webhook:payments", type = "payment.succeeded")
 * public record PaymentSucceeded(String paymentId, long amount) {}
 *
 * @Transactional
 * public void pay(Payment p) {
 *   payments.insert(p);
 *   publisher.publishEvent(new PaymentSucceeded(p.id(), p.amount())); // written with the insert, or not at all
 * }
 * }</pre>
 */
@AutoConfiguration(after = IdemOutboxAutoConfiguration.class,
    afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass(Events.class)
@ConditionalOnProperty(prefix = "idem.events", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemEventsProperties.class)
public class IdemEventsAutoConfiguration {

  /** The listener; only with the auto-configured outbox's single data source. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean(Outbox.class)
  @ConditionalOnSingleCandidate(DataSource.class)
  public ExternalizedEvents externalizedEvents(Outbox outbox, DataSource dataSource, IdemEventsProperties properties,
      ObjectProvider<EventSerializer> serializer, ObjectProvider<OutboxRoute> routes, BeanFactory beanFactory,
      Environment environment) {
    if (properties.getRoutes() == null || properties.getOutsideTransaction() == null) {
      throw new IllegalStateException("idem.events.routes and idem.events.outside-transaction must not be null");
    }
    Set<String> served = new LinkedHashSet<>();
    routes.orderedStream().forEach(r -> served.add(r.name()));
    ClassLoader loader = ClassUtils.getDefaultClassLoader();
    List<Class<?>> annotated = properties.isScan()
        ? ExternalizedScan.classes(beanFactory, environment, loader) : List.of();
    // only an application that has events to write: without a route, the listener never writes anything
    boolean used = !annotated.isEmpty() || !properties.getRoutes().isEmpty();
    if (used && outbox.store() instanceof JdbcOutboxStore store && store.dataSource() != dataSource) {
      throw new IllegalStateException("the Outbox bean's store takes its connections from " + store.dataSource()
          + ", but domain events are written through the DataSource bean " + dataSource + ", in its transactions:"
          + " they would land in another database than the outbox's. Build the outbox on that DataSource, define an"
          + " ExternalizedEvents bean of your own, or set idem.events.enabled=false");
    }
    EventSerializer json = serializer.getIfAvailable(() -> event -> {
      throw new IllegalStateException("no EventSerializer: add Jackson (tools.jackson.core:jackson-databind) or"
          + " define an EventSerializer bean");
    });
    return new ExternalizedEvents(outbox, json, dataSource, properties.getOutsideTransaction(),
        properties.getRoutes(), annotated, served, loader);
  }

  /**
   * Stops the start when the application has events to write but the listener was not created (no {@code Outbox}
   * bean, several {@code DataSource}s and none {@code @Primary}), naming the condition that did not match.
   */
  @Bean
  SmartInitializingSingleton idemExternalizedEventsCheck(ConfigurableListableBeanFactory beanFactory,
      IdemEventsProperties properties, Environment environment) {
    return new ExternalizedEventsCheck(beanFactory, properties, environment);
  }

  /**
   * Marks the transactions of every transaction manager bean of a data source as completing while their after-commit
   * and after-completion callbacks run, so that an event published there is not written on a connection that has
   * committed or rolled back already.
   */
  @Bean
  static BeanPostProcessor idemTransactionCompletion() {
    return TransactionCompletion.postProcessor();
  }

  /** The application's Jackson mapper as the events' serializer; a default one when the application has none. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(ObjectMapper.class)
  static class Jackson {
    @Bean
    @ConditionalOnMissingBean
    EventSerializer idemEventSerializer(ObjectProvider<ObjectMapper> mapper) {
      ObjectMapper m = mapper.getIfAvailable(() -> JsonMapper.builder().build());
      return m::writeValueAsString;
    }
  }
}
