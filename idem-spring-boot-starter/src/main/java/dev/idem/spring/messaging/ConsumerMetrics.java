package dev.idem.spring.messaging;

import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * The inbox consumers' meters, as a {@link ConsumerListener}: the consumers of {@code idem.consumers.*} report to it
 * when a {@link MeterRegistry} bean exists; a consumer built by hand gets it through its builder's
 * {@code listener(...)}. Every counter is tagged {@code instance} (the Idem instance, {@code idem.name}) and
 * {@code consumer} (the consumer's name), never with message ids or sources, whose number is unbounded:
 *
 * <ul>
 *   <li>{@code idem.consumer.processed}: messages whose handler ran and committed;
 *   <li>{@code idem.consumer.duplicates}: messages the inbox had processed before, acknowledged without the handler;
 *   <li>{@code idem.consumer.failures}: failures tried again; reason = handler_failed (counted against the message)
 *       or contention (a passing conflict, not counted);
 *   <li>{@code idem.consumer.paused}: pauses while the database was away (no message counted);
 *   <li>{@code idem.consumer.dead.lettered}: messages given up on; reason = handler_failed or payload_mismatch;
 *   <li>{@code idem.consumer.rejected}: messages refused without running the handler; reason = missing_event_id,
 *       invalid_event_id or too_large;
 *   <li>{@code idem.consumer.errors}: the broker could not be answered, read or written (kind = answer, receive,
 *       dead_letter) and consumers that stopped for good (kind = stopped).
 * </ul>
 *
 * <p>Thread-safe; never throws into the consumer.
 */
public final class ConsumerMetrics implements ConsumerListener {
  private final MeterRegistry registry;
  private final String instance;

  /**
   * Meters on {@code registry}.
   *
   * @param instance the {@code instance} tag of every meter: the Idem instance's name ({@code idem.name})
   */
  public ConsumerMetrics(MeterRegistry registry, String instance) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.instance = Objects.requireNonNull(instance, "instance");
  }

  private void count(String name, String description, String consumer, String... tags) {
    Counter.builder(name).description(description).tags("instance", instance, "consumer", consumer).tags(tags)
        .register(registry).increment();
  }

  @Override
  public void processed(String consumer, String source, String messageId) {
    count("idem.consumer.processed", "Messages whose handler ran and committed", consumer);
  }

  @Override
  public void duplicate(String consumer, String source, String messageId) {
    count("idem.consumer.duplicates", "Messages processed before, acknowledged without running the handler",
        consumer);
  }

  @Override
  public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
    count("idem.consumer.failures", "Failed messages tried again", consumer, "reason", decision.reason().code());
  }

  @Override
  public void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {
    count("idem.consumer.paused", "Pauses while the database was away", consumer);
  }

  @Override
  public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
    count("idem.consumer.rejected", "Messages refused without running the handler", consumer,
        "reason", reason.code());
  }

  @Override
  public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
    count("idem.consumer.dead.lettered", "Messages given up on", consumer, "reason", decision.reason().code());
  }

  @Override
  public void deadLetterFailed(String consumer, String source, String messageId, Throwable error) {
    count("idem.consumer.errors", "Broker operations that failed", consumer, "kind", "dead_letter");
  }

  @Override
  public void answerFailed(String consumer, String source, String messageId, Throwable error) {
    count("idem.consumer.errors", "Broker operations that failed", consumer, "kind", "answer");
  }

  @Override
  public void receiveFailed(String consumer, String source, Throwable error) {
    count("idem.consumer.errors", "Broker operations that failed", consumer, "kind", "receive");
  }

  @Override
  public void stopped(String consumer, Throwable error) {
    count("idem.consumer.errors", "Broker operations that failed", consumer, "kind", "stopped");
  }
}
