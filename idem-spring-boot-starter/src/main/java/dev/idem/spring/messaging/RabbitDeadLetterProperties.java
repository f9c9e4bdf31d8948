package dev.idem.spring.messaging;

/**
 * Where RabbitMQ messages given up on are republished, with their attempt history: the settings
 * {@code dead-letter-exchange}, {@code dead-letter-routing-key} and {@code dead-letter-attempts} of
 * {@code idem.consumers.<name>.rabbitmq.*} and {@code idem.listeners.rabbit.*}. Unset: such messages are rejected
 * without requeue, to the queue's own dead-letter exchange if it has one, which adds only RabbitMQ's {@code x-death}
 * header.
 */
public class RabbitDeadLetterProperties {
  /**
   * An exchange to republish each message given up on to, with Idem's {@code idem-dlt-*} headers (its attempt
   * history), before it is acknowledged. It must exist: a message whose dead letter RabbitMQ does not confirm is
   * requeued.
   */
  private String deadLetterExchange;
  /** The routing key of the dead letters (default: the name of the queue the message came from). */
  private String deadLetterRoutingKey;
  /**
   * Publications of one message's dead letter that may fail in a row (1 to 1,000): then it is rejected without
   * requeue instead (to the queue's own dead-letter exchange, if it has one) and logged at ERROR.
   */
  private int deadLetterAttempts = 5;

  public String getDeadLetterExchange() {
    return deadLetterExchange;
  }

  public void setDeadLetterExchange(String deadLetterExchange) {
    this.deadLetterExchange = deadLetterExchange;
  }

  public String getDeadLetterRoutingKey() {
    return deadLetterRoutingKey;
  }

  public void setDeadLetterRoutingKey(String deadLetterRoutingKey) {
    this.deadLetterRoutingKey = deadLetterRoutingKey;
  }

  public int getDeadLetterAttempts() {
    return deadLetterAttempts;
  }

  public void setDeadLetterAttempts(int deadLetterAttempts) {
    this.deadLetterAttempts = deadLetterAttempts;
  }
}
