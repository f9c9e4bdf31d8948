package dev.idem.spring.listener;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.AfterRollbackProcessor;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DelegatingMessageListener;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.listener.adapter.HandlerAdapter;
import org.springframework.kafka.listener.adapter.MessagingMessageListenerAdapter;
import org.springframework.kafka.support.TopicPartitionOffset;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;
import org.springframework.util.ReflectionUtils;

/**
 * The start check of the Kafka listener containers that call {@link IdempotentListener} methods, run before the
 * containers start: each must hand a failure to a {@link CommonErrorHandler} bean (the starter's, or the
 * application's own), or, with a transaction manager, to an {@link AfterRollbackProcessor} bean; Spring's defaults,
 * which a container factory not built by Spring Boot falls back to, skip a record after ten tries, so a record handed
 * back during a database outage, or given up on, would be lost. And the dead-letter topic of every topic a container
 * with the starter's handler listens to must exist. Off with {@code idem.listeners.kafka.error-handler=false}. Loaded
 * only when Spring for Apache Kafka is present.
 */
final class KafkaListenerContainers {
  private static final System.Logger LOG = System.getLogger(KafkaListenerContainers.class.getName());
  /** The bean names of the starter's error handler and after-rollback processor. */
  static final String ERROR_HANDLER = "idemListenerErrorHandler";
  static final String AFTER_ROLLBACK = "idemListenerAfterRollbackProcessor";
  /** How long the check of the dead-letter topics waits for the broker. */
  static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(10);

  private KafkaListenerContainers() {}

  /**
   * Fails the start naming the container and its factory when a container that calls an {@link IdempotentListener}
   * method would use Spring's default error handling, or, when the starter's handler is in use, when a dead-letter
   * topic is missing.
   */
  static void check(ListableBeanFactory beans, KafkaListenerEndpointRegistry registry,
      IdempotentListenerInterceptor interceptor, String suffix, KafkaAdmin admin) {
    Map<String, String> deadLetterTopics = new LinkedHashMap<>(); // dead-letter topic -> the listener it serves
    for (MessageListenerContainer container : registry.getListenerContainers()) {
      ListenerMethod m = served(container, interceptor);
      if (m == null || !(container instanceof AbstractMessageListenerContainer<?, ?> c)) {
        continue;
      }
      ContainerProperties properties = c.getContainerProperties();
      boolean transactional = properties.getKafkaAwareTransactionManager() != null
          || properties.getTransactionManager() != null;
      Object handler = transactional ? c.getAfterRollbackProcessor() : c.getCommonErrorHandler();
      Class<?> type = transactional ? AfterRollbackProcessor.class : CommonErrorHandler.class;
      if (handler == null || !beans.getBeansOfType(type, false, false).containsValue(handler)) {
        throw new IllegalStateException(unhandled(beans, m, c, transactional, handler));
      }
      boolean ours = beans.containsBean(transactional ? AFTER_ROLLBACK : ERROR_HANDLER)
          && beans.getBean(transactional ? AFTER_ROLLBACK : ERROR_HANDLER) == handler;
      if (ours && c.isAutoStartup()) {
        for (String topic : topics(properties)) {
          deadLetterTopics.putIfAbsent(topic + suffix, m.source);
        }
      }
    }
    if (!deadLetterTopics.isEmpty()) {
      checkTopics(deadLetterTopics, suffix, admin);
    }
  }

  private static String unhandled(ListableBeanFactory beans, ListenerMethod m, AbstractMessageListenerContainer<?, ?> c,
      boolean transactional, Object handler) {
    String what = transactional ? "after-rollback processor" : "error handler";
    String bean = transactional ? AFTER_ROLLBACK : ERROR_HANDLER;
    String setter = transactional ? "setAfterRollbackProcessor" : "setCommonErrorHandler";
    String factories = String.join("', '", KafkaContainerFactories.factoryNames(beans, m.method));
    String has = handler == null ? "none, so Spring's default" : handler.getClass().getName() + ", not a bean"
        + " (Spring's default when the factory sets none)";
    String starters = beans.containsBean(bean) ? "the starter's (the bean '" + bean + "')"
        : "the starter's, which it did not register (it needs a single, or a @Primary, KafkaTemplate, and no "
            + (transactional ? "AfterRollbackProcessor" : "CommonErrorHandler") + " bean of the application's)";
    return "@IdempotentListener on " + m.source + " is called by the Kafka listener container '" + c.getListenerId()
        + "' (container factory '" + factories + "'), whose " + what + " is " + has + ": it would skip a record after"
        + " ten tries and commit its offset, so a record handed back during a database outage longer than ten times"
        + " idem.listeners.max-hold would be lost, and one given up on skipped without a dead letter. Use Spring"
        + " Boot's kafkaListenerContainerFactory (or build the factory with Spring Boot's"
        + " ConcurrentKafkaListenerContainerFactoryConfigurer), or set " + starters + " on the factory ("
        + setter + "), or set idem.listeners.kafka.error-handler=false if an " + what + " of your own handles"
        + " Idem's exceptions (see docs/listeners.md)";
  }

  /** The {@link IdempotentListener} method {@code container} calls, or null. */
  static ListenerMethod served(MessageListenerContainer container, IdempotentListenerInterceptor interceptor) {
    Object listener = container.getContainerProperties().getMessageListener();
    while (listener instanceof DelegatingMessageListener<?> d && d.getDelegate() != listener) {
      listener = d.getDelegate();
    }
    if (!(listener instanceof MessagingMessageListenerAdapter<?, ?> adapter)) {
      return null;
    }
    HandlerAdapter handler = (HandlerAdapter) read(MessagingMessageListenerAdapter.class, "handlerMethod", adapter);
    if (handler == null || handler.getBean() == null) {
      return null;
    }
    // null for a class-level @KafkaListener, whose @KafkaHandler methods the container calls
    InvocableHandlerMethod invoker = (InvocableHandlerMethod) read(HandlerAdapter.class, "invokerHandlerMethod",
        handler);
    Method method = invoker == null ? null : invoker.getMethod();
    return interceptor.listenerMethod(handler.getBean(), method, ListenerMethod.Broker.KAFKA);
  }

  /** A private field of Spring for Apache Kafka's, or null when it cannot be read (another version). */
  private static Object read(Class<?> type, String name, Object target) {
    Field field = ReflectionUtils.findField(type, name);
    if (field == null) {
      LOG.log(System.Logger.Level.WARNING, "cannot tell which method a Kafka listener container calls ("
          + type.getName() + "." + name + " is missing): its error handling is not checked");
      return null;
    }
    ReflectionUtils.makeAccessible(field);
    return ReflectionUtils.getField(field, target);
  }

  /** The topics a container listens to by name (a pattern's are not known before it subscribes). */
  private static List<String> topics(ContainerProperties properties) {
    List<String> topics = new ArrayList<>();
    if (properties.getTopics() != null) {
      topics.addAll(List.of(properties.getTopics()));
    }
    if (properties.getTopicPartitions() != null) {
      for (TopicPartitionOffset p : properties.getTopicPartitions()) {
        if (!topics.contains(p.getTopic())) {
          topics.add(p.getTopic());
        }
      }
    }
    return topics;
  }

  /**
   * Fails when a dead-letter topic does not exist: the starter's handler could not publish what a listener gave up on
   * there, and would deliver the record again, and run it through all its attempts, without end. A broker that cannot
   * be reached within {@link #ADMIN_TIMEOUT} is left to the containers (logged).
   */
  static void checkTopics(Map<String, String> deadLetterTopics, String suffix, KafkaAdmin kafkaAdmin) {
    if (kafkaAdmin == null) {
      LOG.log(System.Logger.Level.WARNING, "the Kafka dead-letter topics " + deadLetterTopics.keySet() + " are not"
          + " checked: the application has no single KafkaAdmin bean");
      return;
    }
    Map<String, Object> config = new HashMap<>(kafkaAdmin.getConfigurationProperties());
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis());
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis());
    config.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "idem-listeners-check");
    Set<String> missing = new TreeSet<>();
    try (Admin admin = Admin.create(config)) {
      Map<String, KafkaFuture<TopicDescription>> found = admin.describeTopics(deadLetterTopics.keySet())
          .topicNameValues();
      long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
      for (Map.Entry<String, KafkaFuture<TopicDescription>> e : found.entrySet()) {
        try {
          e.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException failed) {
          if (!(failed.getCause() instanceof UnknownTopicOrPartitionException)) {
            throw failed;
          }
          missing.add(e.getKey());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    } catch (Exception e) {
      LOG.log(System.Logger.Level.WARNING, "the Kafka dead-letter topics " + deadLetterTopics.keySet() + " are not"
          + " checked: " + e);
      return;
    }
    if (!missing.isEmpty()) {
      String first = missing.iterator().next();
      throw new IllegalStateException("the Kafka dead-letter topics " + missing + " do not exist (the first serves"
          + " @IdempotentListener on " + deadLetterTopics.get(first) + "): the starter's error handler publishes"
          + " what a listener gives up on to <topic>" + suffix + " and, while it cannot, delivers the record again"
          + " and runs it through all its attempts, without end, stalling its partition. Create them (the suffix is"
          + " idem.listeners.kafka.dead-letter-suffix)");
    }
  }
}
