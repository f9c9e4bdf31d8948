package dev.idem.outbox;

import dev.idem.core.IdemException;

/** A consumer's handler failed; its cause is what the handler threw. Roll the transaction back. */
public final class InboxHandlerException extends IdemException {
  private final String consumer;
  private final String eventId;

  public InboxHandlerException(String consumer, String eventId, Throwable cause) {
    super("handler of consumer '" + consumer + "' failed on event '" + eventId + "': " + cause, cause);
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
