package dev.idem.spring.listener;

import dev.idem.spring.internal.SpringDataSourceTransactions;
import java.lang.reflect.Method;
import java.util.LinkedHashSet;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.AbstractKafkaListenerContainerFactory;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.transaction.KafkaAwareTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The start check of the Kafka container factories that call {@link IdempotentListener} methods: none may run its
 * containers in the inbox's transaction manager. Loaded only for listeners Spring for Apache Kafka calls.
 */
final class KafkaContainerFactories {
  /** The factory a {@code @KafkaListener} without {@code containerFactory} uses. */
  static final String DEFAULT = "kafkaListenerContainerFactory";
  private static final String CHAINED = "org.springframework.kafka.transaction.ChainedKafkaTransactionManager";

  private KafkaContainerFactories() {}

  /**
   * Fails when a factory that calls {@code m} (its {@code @KafkaListener}'s, or the default one) runs its containers
   * in a transaction manager of the inbox's data source, or in one whose resource cannot be told (JTA, a chained
   * manager): the interceptor would then join a transaction it does not own, and could neither count a failure nor
   * give a message up. Kafka's own manager, and another data source's, are fine. A factory named by a property
   * placeholder is resolved; one named by a SpEL expression is left to Spring, unchecked.
   */
  static void check(ListableBeanFactory beans, ListenerMethod m, DataSource inbox) {
    for (String name : factoryNames(beans, m.method)) {
      if (!beans.containsBean(name) || !beans.isTypeMatch(name, AbstractKafkaListenerContainerFactory.class)) {
        continue;
      }
      ContainerProperties properties = beans.getBean(name, AbstractKafkaListenerContainerFactory.class)
          .getContainerProperties();
      // the container runs in Kafka's manager when it has one, else in the other (Spring for Apache Kafka 4)
      PlatformTransactionManager manager = properties.getKafkaAwareTransactionManager() != null
          ? properties.getKafkaAwareTransactionManager() : properties.getTransactionManager();
      if (manager == null || manager instanceof KafkaAwareTransactionManager && !chained(manager)) {
        continue;
      }
      DataSource managed = SpringDataSourceTransactions.dataSourceOf(manager);
      if (managed != null && managed != inbox) {
        continue; // another data source's transaction: the inbox opens its own beside it
      }
      throw new IllegalStateException("@IdempotentListener on " + m.source + " is called by the Kafka container"
          + " factory '" + name + "', whose containers run in " + manager.getClass().getName() + ", a transaction"
          + " manager of the inbox's DataSource (or one whose resource Idem cannot tell): the listener would join"
          + " that transaction instead of opening the inbox's own, so it could neither count a failure nor give a"
          + " message up. Take the transaction manager off the factory (the inbox opens its transaction on its"
          + " DataSource), or use Kafka's alone (spring.kafka.producer.transaction-id-prefix)");
    }
  }

  /**
   * Whether {@code manager} is Spring for Apache Kafka's chained manager (deprecated, and built on Spring Data's
   * {@code ChainedTransactionManager}, which may be absent, so it is known by name): it also runs a database's.
   */
  private static boolean chained(PlatformTransactionManager manager) {
    for (Class<?> c = manager.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals(CHAINED)) {
        return true;
      }
    }
    return false;
  }

  static Set<String> factoryNames(ListableBeanFactory beans, Method method) {
    Set<String> names = new LinkedHashSet<>();
    MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).stream(KafkaListener.class)
        .forEach(a -> add(beans, names, a));
    if (names.isEmpty()) {
      // a @KafkaHandler method of a class-level @KafkaListener
      MergedAnnotations.from(method.getDeclaringClass(), SearchStrategy.TYPE_HIERARCHY).stream(KafkaListener.class)
          .forEach(a -> add(beans, names, a));
    }
    return names;
  }

  private static void add(ListableBeanFactory beans, Set<String> names, MergedAnnotation<KafkaListener> listener) {
    String factory = listener.getString("containerFactory");
    if (factory.contains("${") && beans instanceof ConfigurableBeanFactory configurable) {
      factory = configurable.resolveEmbeddedValue(factory);
    }
    if (factory == null || factory.isEmpty()) {
      names.add(DEFAULT);
    } else if (!factory.contains("#{") && !factory.contains("${")) {
      names.add(factory);
    }
  }
}
