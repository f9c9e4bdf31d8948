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
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.config.BaseRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * The advice that republishes a message an {@link IdempotentListener} on a {@code @RabbitListener} gave up on
 * ({@link ListenerGaveUpException}) to {@code idem.listeners.rabbit.dead-letter-exchange}, with the message's body,
 * properties and headers plus Idem's {@code idem-dlt-*} headers ({@link RabbitMqDeadLetters}), waits for the
 * broker's confirm, reports it to the listeners and then returns, so that the container acknowledges the original.
 * Dead letters are published on the connection factory's publisher connection (Spring's
 * {@code getPublisherConnectionFactory()}), so that a connection RabbitMQ blocks for publishing (a memory or disk
 * alarm) does not stall the consumers' acks; on the consuming channel's connection only when there is none. A dead
 * letter that is not confirmed hands the message back (an {@link ImmediateRequeueAmqpException}) after a pause; its
 * redelivery is given up on again without running the method; after {@code dead-letter-attempts} such failures in a
 * row (at once for a message without an id) it is rejected without requeue instead. Added to the advice chain of every
 * RabbitMQ listener container factory; loaded only when Spring AMQP and dev.idem:idem-rabbitmq are present.
 */
final class RabbitDeadLetters implements MethodInterceptor {
  private static final System.Logger LOG = System.getLogger(RabbitDeadLetters.class.getName());
  private static final Duration PAUSE = Duration.ofSeconds(1);

  private final RabbitMqDeadLetters to;
  private final int attempts;
  private final ObjectProvider<IdempotentListenerInterceptor> interceptor;
  private final ObjectProvider<ConnectionFactory> connectionFactories;
  private final Sleeper sleeper;

  private RabbitDeadLetters(IdemListenersProperties.Rabbit properties,
      ObjectProvider<IdempotentListenerInterceptor> interceptor, ObjectProvider<ConnectionFactory> connectionFactories,
      Sleeper sleeper) {
    this.to = to(properties);
    this.attempts = properties.getDeadLetterAttempts();
    this.interceptor = interceptor;
    this.connectionFactories = connectionFactories;
    this.sleeper = sleeper;
  }

  private static RabbitMqDeadLetters to(IdemListenersProperties.Rabbit properties) {
    return RabbitMqDeadLetters.to(properties.getDeadLetterExchange(), properties.getDeadLetterRoutingKey());
  }

  /** Adds this advice to every RabbitMQ listener container factory; the properties were checked. */
  static BeanPostProcessor containerFactories(IdemListenersProperties.Rabbit properties,
      ObjectProvider<IdempotentListenerInterceptor> interceptor,
      ObjectProvider<ConnectionFactory> connectionFactories) {
    RabbitDeadLetters advice = new RabbitDeadLetters(properties, interceptor, connectionFactories, Sleeper.SYSTEM);
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

  /**
   * Checks at startup that the exchange exists, on the application's one connection factory; a broker that cannot be
   * reached is left to the containers (logged).
   *
   * @throws IllegalStateException naming the exchange when it does not exist
   */
  static void checkExchange(IdemListenersProperties.Rabbit properties, ConnectionFactory factory) {
    RabbitMqDeadLetters to = to(properties);
    Connection connection;
    try {
      connection = factory.createConnection();
    } catch (AmqpException e) {
      LOG.log(System.Logger.Level.WARNING, "idem.listeners.rabbit.dead-letter-exchange '" + to.exchange() + "' not"
          + " checked: RabbitMQ cannot be reached (" + OutboxTransport.describe(e) + ")");
      return;
    }
    try {
      to.checkExchange(connection.getDelegate());
    } catch (IOException e) {
      throw new IllegalStateException("idem.listeners.rabbit.dead-letter-exchange: " + e.getMessage(), e);
    } finally {
      connection.close();
    }
  }

  /** The connection to publish on: the publisher connection when there is one, else the channel's. */
  private com.rabbitmq.client.Connection publishing(Channel channel) {
    ConnectionFactory factory = connectionFactories.getIfUnique();
    ConnectionFactory publisher = factory == null ? null : factory.getPublisherConnectionFactory();
    if (publisher == null) {
      return channel.getConnection();
    }
    Connection connection = publisher.createConnection();
    try {
      return connection.getDelegate();
    } finally {
      connection.close(); // a caching factory's shared connection stays open
    }
  }

  private void deadLetter(Channel channel, Message message, ListenerGaveUpException gaveUp) throws IOException {
    MessageProperties props = message.getMessageProperties();
    String queue = props.getConsumerQueue();
    try {
      to.publish(publishing(channel), gaveUp.consumer(), queue, new RabbitMqDeadLetters.Original(
          props.getReceivedExchange(), props.getReceivedRoutingKey(), properties(props), message.getBody()),
          gaveUp.decision(), gaveUp.history());
    } catch (IOException | RuntimeException e) {
      // only the broker's refusal counts: one that does not answer or a connection that is down is waited for
      int counted = RabbitMqDeadLetters.isRefusal(e) ? attempts : 0;
      if (interceptor.getObject().deadLetterFailed(gaveUp, queue, e, counted)) {
        LOG.log(System.Logger.Level.ERROR, "consumer '" + gaveUp.consumer() + "' could not dead-letter message "
            + gaveUp.messageId() + " from queue '" + queue + "' to " + to + " (last: " + OutboxTransport.describe(e)
            + "); rejecting it without requeue instead, to the queue's own dead-letter exchange if it has one");
        throw new ListenerExecutionFailedException("consumer '" + gaveUp.consumer() + "': the dead letter of message "
            + gaveUp.messageId() + " was not published", AmqpMessages.rejectWithoutRequeue(gaveUp), message);
      }
      LOG.log(System.Logger.Level.WARNING, "consumer '" + gaveUp.consumer() + "' could not dead-letter message "
          + gaveUp.messageId() + " from queue '" + queue + "' to " + to + " (" + OutboxTransport.describe(e)
          + "); requeueing it to try again");
      try {
        sleeper.sleep(PAUSE);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      // as a listener's failure, so that the container requeues the message and goes on on the same channel
      throw new ListenerExecutionFailedException("consumer '" + gaveUp.consumer() + "': the dead letter of message "
          + gaveUp.messageId() + " was not published", new ImmediateRequeueAmqpException("requeueing it", e), message);
    }
    interceptor.getObject().deadLettered(gaveUp, queue);
  }

  /** The message's properties as received; its delivery mode kept (Spring reads it as the received one). */
  private static AMQP.BasicProperties properties(MessageProperties props) {
    AMQP.BasicProperties received = new DefaultMessagePropertiesConverter().fromMessageProperties(props,
        StandardCharsets.UTF_8.name());
    MessageDeliveryMode mode = props.getReceivedDeliveryMode();
    return mode == null ? received : received.builder().deliveryMode(MessageDeliveryMode.toInt(mode)).build();
  }
}
