package dev.idem.spring.listener;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.AfterRollbackProcessor;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DelegatingMessageListener;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.listener.adapter.HandlerAdapter;
import org.springframework.kafka.listener.adapter.MessagingMessageListenerAdapter;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;
import org.springframework.util.ReflectionUtils;

/**
 * The start check of the Kafka listener containers that call {@link IdempotentListener} methods, run before the
 * containers start: each must hand a failure to a {@link CommonErrorHandler} bean (the starter's, or the
 * application's own), or, with a transaction manager, to an {@link AfterRollbackProcessor} bean; Spring's defaults,
 * which a container factory not built by Spring Boot falls back to, skip a record after ten tries, so a record handed
 * back during a database outage, or given up on, would be lost. Off with
 * {@code idem.listeners.kafka.error-handler=false}. Loaded only when Spring for Apache Kafka is present.
 */
final class KafkaListenerContainers {
  private static final System.Logger LOG = System.getLogger(KafkaListenerContainers.class.getName());
  /** The bean names of the starter's error handler and after-rollback processor. */
  static final String ERROR_HANDLER = "idemListenerErrorHandler";
  static final String AFTER_ROLLBACK = "idemListenerAfterRollbackProcessor";

  private KafkaListenerContainers() {}

  /**
   * Fails the start naming the container and its factory when a container that calls an {@link IdempotentListener}
   * method would use Spring's default error handling.
   */
  static void check(ListableBeanFactory beans, KafkaListenerEndpointRegistry registry,
      IdempotentListenerInterceptor interceptor) {
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
}
