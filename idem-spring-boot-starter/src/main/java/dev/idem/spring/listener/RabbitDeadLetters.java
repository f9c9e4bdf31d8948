package dev.idem.spring.listener;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idem.core.spi.Sleeper;
import dev.idem.outbox.OutboxTransport;
import dev.idem.rabbitmq.RabbitMqDeadLetters;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.config.BaseRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * The advice that republishes a message an {@link IdempotentListener} on a {@code @RabbitListener} gave up on
 * ({@link ListenerGaveUpException}) to {@code idem.listeners.rabbit.dead-letter-exchange}, with the message's body,
 * properties and headers plus Idem's {@code idem-dlt-*} headers ({@link RabbitMqDeadLetters}), waits for the
 * broker's confirm and then returns, so that the container acknowledges the original. A dead letter that is not
 * confirmed hands the message back (an {@link ImmediateRequeueAmqpException}) after a pause; its redelivery is given up
 * on again without running the method. Added to the advice chain of every RabbitMQ listener container factory;
 * loaded only when Spring AMQP and dev.idem:idem-rabbitmq are present.
 */
final class RabbitDeadLetters implements MethodInterceptor {
  private static final System.Logger LOG = System.getLogger(RabbitDeadLetters.class.getName());
  private static final Duration PAUSE = Duration.ofSeconds(1);

  private final RabbitMqDeadLetters to;
  private final ObjectProvider<IdempotentListenerInterceptor> interceptor;
  private final Sleeper sleeper;

  private RabbitDeadLetters(RabbitMqDeadLetters to, ObjectProvider<IdempotentListenerInterceptor> interceptor,
      Sleeper sleeper) {
    this.to = to;
    this.interceptor = interceptor;
    this.sleeper = sleeper;
  }

  /** Adds this advice to every RabbitMQ listener container factory; the properties were checked. */
  static BeanPostProcessor containerFactories(IdemListenersProperties.Rabbit properties,
      ObjectProvider<IdempotentListenerInterceptor> interceptor) {
    RabbitDeadLetters advice = new RabbitDeadLetters(RabbitMqDeadLetters.to(properties.getDeadLetterExchange(),
        properties.getDeadLetterRoutingKey()), interceptor, Sleeper.SYSTEM);
    return new BeanPostProcessor() {
      @Override
      public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof BaseRabbitListenerContainerFactory<?> factory) {
          Advice[] chain = factory.getAdviceChain() == null ? new Advice[0] : factory.getAdviceChain();
          if (Arrays.stream(chain).noneMatch(a -> a instanceof RabbitDeadLetters)) {
            Advice[] withOurs = Arrays.copyOf(chain, chain.length + 1);
            withOurs[chain.length] = advice; // innermost: it sees the listener's exception first
            factory.setAdviceChain(withOurs);
          }
        }
        return bean;
      }
    };
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    try {
      return invocation.proceed();
    } catch (RuntimeException e) {
      ListenerGaveUpException gaveUp = ListenerGaveUpException.find(e, ListenerGaveUpException.class);
      Object[] args = invocation.getArguments();
      if (gaveUp == null || args.length < 2 || !(args[0] instanceof Channel channel)
          || !(args[1] instanceof Message message)) {
        throw e;
      }
      deadLetter(channel, message, gaveUp);
      return null; // the container acknowledges the original
    }
  }

  private void deadLetter(Channel channel, Message message, ListenerGaveUpException gaveUp) throws IOException {
    MessageProperties props = message.getMessageProperties();
    String queue = props.getConsumerQueue();
    try {
      to.publish(channel.getConnection(), gaveUp.consumer(), queue, new RabbitMqDeadLetters.Original(
          props.getReceivedExchange(), props.getReceivedRoutingKey(), properties(props), message.getBody()),
          gaveUp.decision(), gaveUp.history());
    } catch (IOException | RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "consumer '" + gaveUp.consumer() + "' could not dead-letter message "
          + gaveUp.messageId() + " from queue '" + queue + "' to " + to + " (" + OutboxTransport.describe(e)
          + "); requeueing it to try again");
      interceptor.getObject().deadLetterFailed(gaveUp, queue, e);
      try {
        sleeper.sleep(PAUSE);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      // as a listener's failure, so that the container requeues the message and goes on on the same channel
      throw new ListenerExecutionFailedException("consumer '" + gaveUp.consumer() + "': the dead letter of message "
          + gaveUp.messageId() + " was not published", new ImmediateRequeueAmqpException("requeueing it", e), message);
    }
  }

  /** The message's properties as received; its delivery mode kept (Spring reads it as the received one). */
  private static AMQP.BasicProperties properties(MessageProperties props) {
    AMQP.BasicProperties received = new DefaultMessagePropertiesConverter().fromMessageProperties(props,
        StandardCharsets.UTF_8.name());
    MessageDeliveryMode mode = props.getReceivedDeliveryMode();
    return mode == null ? received : received.builder().deliveryMode(MessageDeliveryMode.toInt(mode)).build();
  }
}
