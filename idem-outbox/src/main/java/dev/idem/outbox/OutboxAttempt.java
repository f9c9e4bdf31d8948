package dev.idem.outbox;

import java.time.Instant;
import java.util.Optional;

/**
 * One failed attempt to send an event, kept in its history (the newest {@link Outbox.Builder#historyLimit} per event).
 *
 * @param attempt the attempt's number, counted over the event's whole life (replays do not restart it)
 * @param at when the attempt ended
 * @param error what went wrong
 * @param responseCode the destination's response code, such as an HTTP status, or null
 */
public record OutboxAttempt(int attempt, Instant at, String error, Integer responseCode) {
  public Optional<Integer> response() {
    return Optional.ofNullable(responseCode);
  }
}
