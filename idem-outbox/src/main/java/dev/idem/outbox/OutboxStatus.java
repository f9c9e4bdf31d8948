package dev.idem.outbox;

/** Where an outbox event is in its life. */
public enum OutboxStatus {
  /** Waiting to be sent, being sent (leased by a relay) or waiting for its next attempt. */
  PENDING,
  /** A transport accepted it. Purged after the retention period. */
  DELIVERED,
  /** Out of attempts, or refused for good. Kept until an operator replays or discards it; parks an ordered aggregate. */
  DEAD,
  /** Given up by an operator. Unparks its aggregate; purged like a delivered event. */
  DISCARDED
}
