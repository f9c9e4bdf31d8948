package dev.idem.spring.listener;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;

/** The message id, source and body of an AMQP {@code Message}; loaded only when the application has Spring AMQP. */
final class AmqpMessages {
  private AmqpMessages() {}

  static String id(Object message) {
    return ((Message) message).getMessageProperties().getMessageId();
  }

  static String source(Object message) {
    return ((Message) message).getMessageProperties().getConsumerQueue();
  }

  static byte[] body(Object message) {
    byte[] body = ((Message) message).getBody();
    return body == null ? new byte[0] : body;
  }

  /** What the container takes as "reject without requeue": the queue's dead-letter exchange gets the message. */
  static RuntimeException rejectWithoutRequeue(ListenerGaveUpException gaveUp) {
    return new AmqpRejectAndDontRequeueException(gaveUp.getMessage(), gaveUp);
  }

  /**
   * What the container takes as "requeue", whatever its {@code defaultRequeueRejected}: a message handed back must
   * come again, never go to the queue's dead-letter exchange nor be dropped.
   */
  static RuntimeException requeue(ListenerRetryLaterException handBack) {
    return new ImmediateRequeueAmqpException(handBack.getMessage(), handBack);
  }
}
