package dev.idem.spring.listener;

import dev.idem.outbox.consumer.ConsumerEngine;
import dev.idem.spring.messaging.RabbitDeadLetterProperties;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code idem.listeners.*} properties of {@link IdempotentListener} methods. Validated once at startup by
 * {@link #engine()}; the defaults are those of Idem's own consumers.
 */
@ConfigurationProperties(prefix = "idem.listeners")
public class IdemListenersProperties {
  private static final Duration HOUR = Duration.ofHours(1);

  /** Run {@code @IdempotentListener} methods through the inbox. */
  private boolean enabled = true;
  /** The attempt on which a message whose work keeps failing is given up on (1 to 100, or -1: never). */
  private int maxAttempts = 5;
  /** The longest one delivery is held in the listener thread, waiting between tries, before it is handed back. */
  private Duration maxHold = Duration.ofSeconds(60);
  private final Backoff backoff = new Backoff();
  private final Kafka kafka = new Kafka();
  private final Rabbit rabbit = new Rabbit();

  /** The wait after the n-th failure, or the n-th outage in a row: {@code initial * 2^(n-1)}, at most {@code max}. */
  public static class Backoff {
    /** The wait after the first failure. */
    private Duration initial = Duration.ofMillis(100);
    /** The longest wait. */
    private Duration max = Duration.ofSeconds(30);

    public Duration getInitial() {
      return initial;
    }

    public void setInitial(Duration initial) {
      this.initial = initial;
    }

    public Duration getMax() {
      return max;
    }

    public void setMax(Duration max) {
      this.max = max;
    }
  }

  /** The Kafka error handler the starter registers when the application has no {@code CommonErrorHandler} bean. */
  public static class Kafka {
    /** Register it: a record given up on is published to the dead-letter topic at once. */
    private boolean errorHandler = true;
    /** The dead-letter topic of each topic: the topic's name with this suffix. */
    private String deadLetterSuffix = ".dlt";

    public boolean isErrorHandler() {
      return errorHandler;
    }

    public void setErrorHandler(boolean errorHandler) {
      this.errorHandler = errorHandler;
    }

    public String getDeadLetterSuffix() {
      return deadLetterSuffix;
    }

    public void setDeadLetterSuffix(String deadLetterSuffix) {
      this.deadLetterSuffix = deadLetterSuffix;
    }
  }

  /**
   * Where {@code @RabbitListener} methods' messages given up on go ({@code idem.listeners.rabbit.*}); republishing
   * them needs dev.idem:idem-rabbitmq.
   */
  public static class Rabbit extends RabbitDeadLetterProperties {}

  /**
   * The consumer engine these settings make, checked: the message names the property and the bad value.
   *
   * @throws IllegalStateException on a bad setting
   */
  public ConsumerEngine engine() {
    if (maxAttempts != ConsumerEngine.UNLIMITED && (maxAttempts < 1 || maxAttempts > 100)) {
      throw new IllegalStateException("idem.listeners.max-attempts must be 1 to 100, or -1 (never give up), got "
          + maxAttempts);
    }
    Duration initial = backoff.getInitial();
    Duration max = backoff.getMax();
    if (initial == null || max == null || initial.isNegative() || max.compareTo(initial) < 0
        || max.compareTo(HOUR) > 0) {
      throw new IllegalStateException("idem.listeners.backoff.initial and .max need 0 <= initial <= max <= 1h, got "
          + initial + " and " + max);
    }
    if (maxHold == null || maxHold.isNegative() || maxHold.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalStateException("idem.listeners.max-hold must be 0s to 10m (and well below Kafka's"
          + " max.poll.interval.ms), got " + maxHold);
    }
    String suffix = kafka.getDeadLetterSuffix();
    if (suffix == null || !suffix.matches("[A-Za-z0-9._-]{1,40}")) {
      throw new IllegalStateException("idem.listeners.kafka.dead-letter-suffix must be 1 to 40 of [A-Za-z0-9._-],"
          + " got '" + suffix + "'");
    }
    checkRabbit();
    return ConsumerEngine.builder().maxAttempts(maxAttempts).backoff(initial, max).build();
  }

  private void checkRabbit() {
    String exchange = rabbit.getDeadLetterExchange();
    String key = rabbit.getDeadLetterRoutingKey();
    if (exchange == null && key != null) {
      throw new IllegalStateException("idem.listeners.rabbit.dead-letter-routing-key is set but"
          + " idem.listeners.rabbit.dead-letter-exchange is not: set the exchange too, or neither");
    }
    if (exchange != null && (exchange.isBlank() || utf8Length(exchange) > 255)) {
      throw new IllegalStateException("idem.listeners.rabbit.dead-letter-exchange must be a name of 1 to 255 UTF-8"
          + " bytes, not blank (leave it unset for the queue's own dead-letter exchange), got '" + exchange + "'");
    }
    if (key != null && utf8Length(key) > 255) {
      throw new IllegalStateException("idem.listeners.rabbit.dead-letter-routing-key must be at most 255 UTF-8 bytes,"
          + " got " + utf8Length(key));
    }
    if (rabbit.getDeadLetterAttempts() < 1 || rabbit.getDeadLetterAttempts() > 1_000) {
      throw new IllegalStateException("idem.listeners.rabbit.dead-letter-attempts must be 1 to 1000, got "
          + rabbit.getDeadLetterAttempts());
    }
  }

  private static int utf8Length(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public int getMaxAttempts() {
    return maxAttempts;
  }

  public void setMaxAttempts(int maxAttempts) {
    this.maxAttempts = maxAttempts;
  }

  public Duration getMaxHold() {
    return maxHold;
  }

  public void setMaxHold(Duration maxHold) {
    this.maxHold = maxHold;
  }

  public Backoff getBackoff() {
    return backoff;
  }

  public Kafka getKafka() {
    return kafka;
  }

  public Rabbit getRabbit() {
    return rabbit;
  }
}
