package dev.idem.outbox.events;

/**
 * Turns an event object into the JSON text of its outbox payload: the application's JSON mapper, such as
 * {@code objectMapper::writeValueAsString}. Thread-safe.
 */
@FunctionalInterface
public interface EventSerializer {
  /**
   * The JSON text of {@code event}.
   *
   * @throws Exception when the event cannot be serialised; {@link Events#publish} reports it, naming the event class
   */
  String toJson(Object event) throws Exception;
}
