package dev.idem.outbox;

import dev.idem.core.IdemException;

/**
 * An event id arrived again with a different payload: a producer reused an id, or the event was altered. Nothing was
 * processed; the caller should roll back and alert (the inbox's listener counts it).
 */
public final class InboxPayloadMismatchException extends IdemException {
  private final String consumer;
  private final String eventId;

  public InboxPayloadMismatchException(String consumer, String eventId) {
    super("event '" + eventId + "' for consumer '" + consumer + "' was processed before with a different payload");
    this.consumer = consumer;
    this.eventId = eventId;
  }

  public String consumer() {
    return consumer;
  }

  public String eventId() {
    return eventId;
  }
}
