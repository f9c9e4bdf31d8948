package dev.idem.spring.listener;

import java.lang.reflect.Method;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.AbstractKafkaListenerContainerFactory;
import org.springframework.kafka.transaction.KafkaAwareTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The start check of the Kafka container factories that call {@link IdempotentListener} methods: none may run its
 * containers in a transaction manager other than Kafka's. Loaded only for listeners Spring for Apache Kafka calls.
 */
final class KafkaContainerFactories {
  /** The factory a {@code @KafkaListener} without {@code containerFactory} uses. */
  static final String DEFAULT = "kafkaListenerContainerFactory";

  private KafkaContainerFactories() {}

  /**
   * Fails when a factory that calls {@code m} (its {@code @KafkaListener}'s, or the default one) has a transaction
   * manager that is not Kafka's: the interceptor would then join a transaction it does not own, and could neither
   * count a failure nor give a message up. Factories named by an expression are resolved later by Spring, not here.
   */
  static void check(ListableBeanFactory beans, ListenerMethod m) {
    for (String name : factoryNames(m.method)) {
      if (!beans.containsBean(name) || !beans.isTypeMatch(name, AbstractKafkaListenerContainerFactory.class)) {
        continue;
      }
      PlatformTransactionManager manager = beans.getBean(name, AbstractKafkaListenerContainerFactory.class)
          .getContainerProperties().getTransactionManager();
      if (manager != null && !(manager instanceof KafkaAwareTransactionManager)) {
        throw new IllegalStateException("@IdempotentListener on " + m.source + " is called by the Kafka container"
            + " factory '" + name + "', whose containers run in " + manager.getClass().getName() + ", not a Kafka"
            + " transaction manager: the listener would join that transaction instead of the inbox's own, so it could"
            + " neither count a failure nor give a message up. Take the transaction manager off the factory (the"
            + " inbox opens its transaction on its DataSource), or use Kafka's"
            + " (spring.kafka.producer.transaction-id-prefix)");
      }
    }
  }

  private static Set<String> factoryNames(Method method) {
    Set<String> names = new LinkedHashSet<>();
    MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).stream(KafkaListener.class)
        .forEach(a -> add(names, a));
    if (names.isEmpty()) {
      // a @KafkaHandler method of a class-level @KafkaListener
      MergedAnnotations.from(method.getDeclaringClass(), SearchStrategy.TYPE_HIERARCHY).stream(KafkaListener.class)
          .forEach(a -> add(names, a));
    }
    return names;
  }

  private static void add(Set<String> names, MergedAnnotation<KafkaListener> listener) {
    String factory = listener.getString("containerFactory");
    if (factory.isEmpty()) {
      names.add(DEFAULT);
    } else if (!factory.contains("#{") && !factory.contains("${")) {
      names.add(factory);
    }
  }
}
