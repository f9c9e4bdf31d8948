package dev.idem.spring.messaging;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.spring.internal.JoinedHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionBuilder;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

/**
 * Registers one {@link InboxConsumerLifecycle} bean per enabled consumer of {@code idem.consumers.*}, named
 * {@code idemConsumer.<name>}, after checking the properties (so a bad setting stops the start before any bean is
 * made). Each bean, when made, looks up its handler, the inbox and the listeners, and builds its consumer once, so
 * that the builder's own checks run at startup too.
 */
final class ConsumerRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {
  private static final Map<String, String> CONSUMER_CLASSES = Map.of(
      "rabbitmq", "dev.idem.rabbitmq.RabbitMqInboxConsumer",
      "nats", "dev.idem.nats.NatsInboxConsumer",
      "kafka", "dev.idem.kafka.KafkaInboxConsumer");

  private Environment environment;
  private ListableBeanFactory beans;

  @Override
  public void setEnvironment(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beans = (ListableBeanFactory) beanFactory;
  }

  @Override
  public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
    IdemConsumersProperties properties = IdemConsumersProperties.bind(environment);
    ClassLoader loader = getClass().getClassLoader();
    properties.getConsumers().forEach((name, consumer) -> {
      if (!consumer.isEnabled()) {
        return;
      }
      String broker = consumer.broker();
      if (!ClassUtils.isPresent(CONSUMER_CLASSES.get(broker), loader)) {
        throw new IllegalStateException(IdemConsumersProperties.PREFIX + "." + name + "." + broker
            + ".* needs dev.idem:idem-" + broker + " on the classpath: add it to the application's dependencies");
      }
      Supplier<InboxConsumerLifecycle> bean = () -> lifecycle(name, broker, properties);
      registry.registerBeanDefinition("idemConsumer." + name,
          BeanDefinitionBuilder.genericBeanDefinition(InboxConsumerLifecycle.class, bean).getBeanDefinition());
    });
  }

  private InboxConsumerLifecycle lifecycle(String name, String broker, IdemConsumersProperties properties) {
    String prefix = IdemConsumersProperties.PREFIX + "." + name;
    InboxHandler handler = handler(prefix, properties.getConsumers().get(name).getHandler());
    Inbox inbox = beans.getBeanProvider(Inbox.class).getIfUnique();
    if (inbox == null) {
      throw new IllegalStateException(prefix + " needs one Inbox bean: add dev.idem:idem-outbox and a DataSource (the"
          + " starter then makes one, see idem.outbox.*), or define one");
    }
    handler = JoinedHandler.of(handler, inbox);
    ConsumerListener listener = listener(beans.getBeanProvider(ConsumerListener.class).orderedStream().toList());
    Supplier<AutoCloseable> starter = switch (broker) {
      case "rabbitmq" -> RabbitMqConsumers.starter(name, properties, inbox, handler, listener, beans);
      case "nats" -> NatsConsumers.starter(name, properties, inbox, handler, listener, beans);
      default -> KafkaConsumers.starter(name, properties, inbox, handler, listener);
    };
    return new InboxConsumerLifecycle(name, broker, starter);
  }

  private InboxHandler handler(String prefix, String beanName) {
    if (!beans.containsBean(beanName)) {
      throw new IllegalStateException(prefix + ".handler: there is no bean named '" + beanName + "'; name an"
          + " InboxHandler bean");
    }
    Object bean = beans.getBean(beanName);
    if (!(bean instanceof InboxHandler handler)) {
      throw new IllegalStateException(prefix + ".handler: bean '" + beanName + "' is a " + bean.getClass().getName()
          + ", not an InboxHandler");
    }
    return handler;
  }

  /** One listener that tells each of {@code listeners}; what one throws keeps no other from hearing. */
  static ConsumerListener listener(List<ConsumerListener> listeners) {
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    List<ConsumerListener> all = List.copyOf(listeners);
    return new ConsumerListener() {
      @Override
      public void processed(String consumer, String source, String messageId) {
        all.forEach(l -> ConsumerListener.safely(() -> l.processed(consumer, source, messageId)));
      }

      @Override
      public void duplicate(String consumer, String source, String messageId) {
        all.forEach(l -> ConsumerListener.safely(() -> l.duplicate(consumer, source, messageId)));
      }

      @Override
      public void committed(String consumer, String source, long nextOffset, int messages, int duplicates) {
        all.forEach(l -> ConsumerListener.safely(() -> l.committed(consumer, source, nextOffset, messages,
            duplicates)));
      }

      @Override
      public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.retried(consumer, source, messageId, decision, error)));
      }

      @Override
      public void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.paused(consumer, source, messageId, decision, error)));
      }

      @Override
      public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
        all.forEach(l -> ConsumerListener.safely(() -> l.rejected(consumer, source, messageId, reason, detail)));
      }

      @Override
      public void deadLettered(String consumer, String source, String messageId, Decision decision,
          Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.deadLettered(consumer, source, messageId, decision,
            error)));
      }

      @Override
      public void deadLetterFailed(String consumer, String source, String messageId, Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.deadLetterFailed(consumer, source, messageId, error)));
      }

      @Override
      public void answerFailed(String consumer, String source, String messageId, Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.answerFailed(consumer, source, messageId, error)));
      }

      @Override
      public void receiveFailed(String consumer, String source, Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.receiveFailed(consumer, source, error)));
      }

      @Override
      public void stopped(String consumer, Throwable error) {
        all.forEach(l -> ConsumerListener.safely(() -> l.stopped(consumer, error)));
      }
    };
  }
}
