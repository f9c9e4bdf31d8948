package dev.idem.spring.listener;

import java.lang.reflect.Method;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.listener.adapter.HandlerAdapter;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter;
import org.springframework.util.ReflectionUtils;

/**
 * The start check of the RabbitMQ listener containers that call {@link IdempotentListener} methods, run before the
 * containers start: each must acknowledge in {@link AcknowledgeMode#AUTO}, after the method returned. {@code NONE}
 * acknowledges on delivery, so a message whose method failed, or that was handed back, is lost; {@code MANUAL} waits
 * for an ack the method cannot give (it may not take the channel), so nothing is ever acknowledged. Loaded only when
 * Spring AMQP is present.
 */
final class RabbitListenerContainers {
  private static final System.Logger LOG = System.getLogger(RabbitListenerContainers.class.getName());

  private RabbitListenerContainers() {}

  /** Fails the start naming the container and the method when one does not acknowledge in {@code AUTO}. */
  static void check(RabbitListenerEndpointRegistry registry, IdempotentListenerInterceptor interceptor) {
    for (MessageListenerContainer container : registry.getListenerContainers()) {
      if (!(container instanceof AbstractMessageListenerContainer c)) {
        continue;
      }
      ListenerMethod m = served(c, interceptor);
      if (m != null && c.getAcknowledgeMode() != AcknowledgeMode.AUTO) {
        throw new IllegalStateException("@IdempotentListener on " + m.source + " is called by the RabbitMQ listener"
            + " container '" + c.getListenerId() + "', whose acknowledge mode is " + c.getAcknowledgeMode() + ": "
            + (c.getAcknowledgeMode() == AcknowledgeMode.NONE ? "RabbitMQ forgets each message as it delivers it, so"
            + " one whose method failed, or that was handed back during a database outage, would be lost"
            : "the container waits for an acknowledgement the method cannot give, so no message would ever be"
            + " acknowledged") + ". Use AUTO, Spring AMQP's default (spring.rabbitmq.listener.simple.acknowledge-mode,"
            + " the container factory's setAcknowledgeMode, or the @RabbitListener's ackMode)");
      }
    }
  }

  /** The {@link IdempotentListener} method {@code container} calls, or null. */
  static ListenerMethod served(AbstractMessageListenerContainer container, IdempotentListenerInterceptor interceptor) {
    if (!(container.getMessageListener() instanceof MessagingMessageListenerAdapter adapter)) {
      return null;
    }
    Method getter = ReflectionUtils.findMethod(MessagingMessageListenerAdapter.class, "getHandlerAdapter");
    if (getter == null) {
      LOG.log(System.Logger.Level.WARNING, "cannot tell which method a RabbitMQ listener container calls: its"
          + " acknowledge mode is not checked");
      return null;
    }
    ReflectionUtils.makeAccessible(getter);
    HandlerAdapter handler = (HandlerAdapter) ReflectionUtils.invokeMethod(getter, adapter);
    if (handler == null || handler.getBean() == null) {
      return null;
    }
    // null for a class-level @RabbitListener, whose @RabbitHandler methods the container calls
    return interceptor.listenerMethod(handler.getBean(), handler.getMethod(), ListenerMethod.Broker.RABBITMQ);
  }
}
