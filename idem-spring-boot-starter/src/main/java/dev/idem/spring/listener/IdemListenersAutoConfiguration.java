package dev.idem.spring.listener;

import dev.idem.core.spi.Sleeper;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.ConsumerEngine;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.spring.messaging.IdemConsumersAutoConfiguration;
import dev.idem.spring.outbox.IdemOutboxAutoConfiguration;
import java.lang.reflect.Method;
import java.time.Clock;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaOperations;
import org.springframework.kafka.listener.AfterRollbackProcessor;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * {@link IdempotentListener} on {@code @KafkaListener} and {@code @RabbitListener} methods, when
 * {@code dev.idem:idem-outbox} is on the classpath: an advisor whose interceptor runs each call through the
 * application's {@link Inbox} (which must store its rows through JDBC), outside the method's own
 * {@code @Transactional}, so that the method joins the inbox's transaction. With Spring for Apache Kafka and a single
 * {@code KafkaTemplate}, and no {@link CommonErrorHandler} bean of the application's, it also registers the Kafka error
 * handler that dead-letters a record given up on to {@code <topic>.dlt}, and, without an {@link AfterRollbackProcessor}
 * bean of the application's, the after-rollback processor that does the same in containers with a transaction
 * manager; with Spring AMQP and {@code idem.listeners.rabbit.dead-letter-exchange}, the advice that republishes a
 * message given up on there with its attempt history (else the container rejects it, to the queue's own dead-letter
 * exchange). Before any listener container starts, it checks the containers that call {@link IdempotentListener}
 * methods: on RabbitMQ each must acknowledge in {@code AUTO} mode; on Kafka (unless
 * {@code idem.listeners.kafka.error-handler=false}) each must hand its failures to an error handler, or after-rollback
 * processor, that is a bean, and the dead-letter topics of the starter's handler must exist. See docs/listeners.md.
 */
@AutoConfiguration(after = {IdemOutboxAutoConfiguration.class, IdemConsumersAutoConfiguration.class},
    afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass({Inbox.class, JdbcInboxStore.class, ConsumerEngine.class, MethodInterceptor.class})
@ConditionalOnProperty(prefix = "idem.listeners", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemListenersProperties.class)
public class IdemListenersAutoConfiguration {
  /** Runs before the transaction advisor (lowest precedence), so that the inbox's transaction is the outer one. */
  static final int ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static IdempotentListenerInterceptor idemListenerInterceptor(ListableBeanFactory beans,
      ObjectProvider<Inbox> inbox, ObjectProvider<PlatformTransactionManager> transactions,
      ObjectProvider<ConsumerListener> listeners, ObjectProvider<Clock> clock,
      ObjectProvider<IdemListenersProperties> properties) {
    return new IdempotentListenerInterceptor(beans, inbox, transactions, listeners, clock, properties,
        () -> JsonWriter.of(beans), Sleeper.SYSTEM);
  }

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor idemListenerAdvisor(IdempotentListenerInterceptor interceptor) {
    DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(new ListenerMethods(), interceptor);
    advisor.setOrder(ORDER);
    return advisor;
  }

  /** Methods annotated {@code @IdempotentListener}. */
  static final class ListenerMethods extends StaticMethodMatcherPointcut {
    @Override
    public boolean matches(Method method, Class<?> targetClass) {
      return AnnotatedElementUtils.hasAnnotation(AopUtils.getMostSpecificMethod(method, targetClass),
          IdempotentListener.class);
    }
  }

  /**
   * A check of the listener containers, run once they exist (every singleton is) and before any starts: the first
   * phase of all.
   */
  static final class ContainersCheck implements SmartLifecycle {
    private final Runnable check;
    private volatile boolean running;

    ContainersCheck(Runnable check) {
      this.check = check;
    }

    @Override
    public void start() {
      check.run();
      running = true;
    }

    @Override
    public void stop() {
      running = false;
    }

    @Override
    public boolean isRunning() {
      return running;
    }

    @Override
    public int getPhase() {
      return Integer.MIN_VALUE;
    }
  }

  /** Checks at startup that every RabbitMQ container that calls an {@link IdempotentListener} acknowledges in AUTO. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry")
  static class RabbitContainers {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SmartLifecycle idemRabbitListenerContainersCheck(ObjectProvider<RabbitListenerEndpointRegistry> registry,
        ObjectProvider<IdempotentListenerInterceptor> interceptor) {
      return new ContainersCheck(() -> registry.forEach(r -> RabbitListenerContainers.check(r,
          interceptor.getObject())));
    }
  }

  /**
   * With {@code idem.listeners.rabbit.dead-letter-exchange}: the advice that republishes what a {@code @RabbitListener}
   * gave up on to that exchange, with its attempt history, added to every RabbitMQ listener container factory.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.amqp.rabbit.config.BaseRabbitListenerContainerFactory")
  @ConditionalOnProperty(prefix = "idem.listeners.rabbit", name = "dead-letter-exchange")
  static class RabbitDeadLetterExchange {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanPostProcessor idemRabbitDeadLetters(Environment environment,
        ObjectProvider<IdempotentListenerInterceptor> interceptor, ObjectProvider<ConnectionFactory> factories) {
      // a post-processor is made before the properties bean can be: bind them here
      IdemListenersProperties properties = Binder.get(environment).bindOrCreate("idem.listeners",
          IdemListenersProperties.class);
      properties.engine(); // checks the exchange and the routing key too
      if (!ClassUtils.isPresent("dev.idem.rabbitmq.RabbitMqDeadLetters", RabbitDeadLetterExchange.class
          .getClassLoader())) {
        throw new IllegalStateException("idem.listeners.rabbit.dead-letter-exchange is set, which needs"
            + " dev.idem:idem-rabbitmq on the classpath (it publishes the dead letters with confirms): add it, or unset"
            + " the property to let RabbitMQ dead-letter rejected messages through the queue's own dead-letter"
            + " exchange");
      }
      return RabbitDeadLetters.containerFactories(properties.getRabbit(), interceptor, factories);
    }

    /**
     * Checks at startup that the exchange exists (on the application's one RabbitMQ connection factory), so that a
     * misspelt name fails the start rather than every dead letter.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SmartInitializingSingleton idemRabbitDeadLetterExchangeCheck(IdemListenersProperties properties,
        ObjectProvider<ConnectionFactory> factories) {
      return () -> {
        ConnectionFactory factory = factories.getIfUnique();
        if (factory != null) {
          RabbitDeadLetters.checkExchange(properties.getRabbit(), factory);
        }
      };
    }
  }

  /**
   * The Kafka error handler and after-rollback processor that dead-letter what a listener gave up on, unless the
   * application has its own. Spring Boot sets both on its listener container factory; a container uses the second
   * when it has a transaction manager.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({DefaultErrorHandler.class, KafkaOperations.class})
  @ConditionalOnProperty(prefix = "idem.listeners.kafka", name = "error-handler", havingValue = "true",
      matchIfMissing = true)
  static class KafkaErrorHandler {
    /** The producer of dead letters that failed deserialization; built on first use, closed with the context. */
    @Bean
    @ConditionalOnSingleCandidate(KafkaOperations.class)
    RawDeadLetters idemListenerRawDeadLetters(ObjectProvider<KafkaOperations<?, ?>> template) {
      return new RawDeadLetters(template.getObject());
    }

    /**
     * Checks at startup that every container that calls an {@link IdempotentListener} hands its failures to an error
     * handler (or after-rollback processor) bean, and that the dead-letter topics of the starter's exist.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SmartLifecycle idemKafkaListenerContainersCheck(ListableBeanFactory beans,
        ObjectProvider<KafkaListenerEndpointRegistry> registry,
        ObjectProvider<IdempotentListenerInterceptor> interceptor, ObjectProvider<IdemListenersProperties> properties,
        ObjectProvider<KafkaAdmin> admin) {
      return new ContainersCheck(() -> registry.forEach(r -> KafkaListenerContainers.check(beans, r,
          interceptor.getObject(), properties.getObject().getKafka().getDeadLetterSuffix(), admin.getIfUnique())));
    }

    @Bean
    @ConditionalOnMissingBean(CommonErrorHandler.class)
    @ConditionalOnSingleCandidate(KafkaOperations.class)
    CommonErrorHandler idemListenerErrorHandler(ObjectProvider<KafkaOperations<?, ?>> template,
        RawDeadLetters raw, IdemListenersProperties properties) {
      properties.engine(); // checks the suffix too
      return KafkaDeadLetters.errorHandler(template.getObject(), raw, properties.getKafka().getDeadLetterSuffix());
    }

    @Bean
    @ConditionalOnMissingBean(AfterRollbackProcessor.class)
    @ConditionalOnSingleCandidate(KafkaOperations.class)
    AfterRollbackProcessor<Object, Object> idemListenerAfterRollbackProcessor(
        ObjectProvider<KafkaOperations<?, ?>> template, RawDeadLetters raw, IdemListenersProperties properties) {
      properties.engine(); // checks the suffix too
      return KafkaDeadLetters.afterRollbackProcessor(template.getObject(), raw,
          properties.getKafka().getDeadLetterSuffix());
    }
  }
}
