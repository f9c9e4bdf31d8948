package dev.idem.spring.listener;

import dev.idem.spring.internal.AnnotatedBeans;
import java.util.List;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Role;

/**
 * Fails the start of an application with Spring for Apache Kafka or Spring AMQP whose {@link IdempotentListener}
 * methods would be ignored: {@link IdemListenersAutoConfiguration} did not apply (most often, dev.idem:idem-outbox is
 * not on the classpath), so nothing runs them through an inbox. Off with {@code idem.listeners.enabled=false}.
 */
@AutoConfiguration(afterName = "dev.idem.spring.listener.IdemListenersAutoConfiguration")
@Conditional(IdemListenersCheckAutoConfiguration.OnListenerContainers.class)
@ConditionalOnProperty(prefix = "idem.listeners", name = "enabled", havingValue = "true", matchIfMissing = true)
public class IdemListenersCheckAutoConfiguration {
  /** The bean name of the interceptor {@link IdemListenersAutoConfiguration} registers. */
  public static final String INTERCEPTOR = "idemListenerInterceptor";

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static SmartInitializingSingleton idemListenersCheck(ListableBeanFactory beans) {
    return () -> {
      if (beans.containsBean(INTERCEPTOR)) {
        return;
      }
      List<AnnotatedBeans.Found<IdempotentListener>> found = AnnotatedBeans.find(beans, IdempotentListener.class);
      if (!found.isEmpty()) {
        AnnotatedBeans.Found<IdempotentListener> first = found.get(0);
        throw new IllegalStateException("@IdempotentListener methods exist (bean '" + first.name() + "' of "
            + first.type().getName() + " ...) but nothing runs them through an inbox, so they would be ignored: add"
            + " dev.idem:idem-outbox and a JDBC inbox (the starter makes one on the application's DataSource), or"
            + " set idem.listeners.enabled=false to run them without one");
      }
    };
  }

  /** Spring for Apache Kafka or Spring AMQP's listener containers are on the classpath. */
  static final class OnListenerContainers extends AnyNestedCondition {
    OnListenerContainers() {
      super(ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnClass(name = "org.springframework.kafka.annotation.KafkaListener")
    static final class Kafka {}

    @ConditionalOnClass(name = "org.springframework.amqp.rabbit.annotation.RabbitListener")
    static final class Rabbit {}
  }
}
