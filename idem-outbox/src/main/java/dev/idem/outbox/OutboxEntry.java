package dev.idem.outbox;

import dev.idem.core.crypto.Encryption;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * An outbox row as an operator sees it.
 *
 * @param seq the row's position: the pagination cursor and, for ordered types, the order within an aggregate
 * @param id the event id
 * @param type the event type
 * @param aggregateType the aggregate's type
 * @param aggregateId the aggregate's id
 * @param ordered whether the event waits for older events of its aggregate
 * @param payload the JSON payload; for a sealed payload that {@link Outbox#list} could not open, the sealed text
 * @param headers the event's headers
 * @param destination where it goes
 * @param status where it is in its life
 * @param attempts every attempt made, replays included
 * @param attemptsSinceReplay the attempts the relay counts against its maximum
 * @param availableAt when it is next due (for a leased event, when the lease ends)
 * @param leaseOwner the claim token of the relay holding it, or null
 * @param leaseUntil when that lease ends, or null
 * @param lastError the last attempt's error, or null
 * @param createdAt when it was enqueued
 * @param finishedAt when it was delivered or discarded, or null
 * @param history the newest failed attempts, oldest first; empty where a listing left it out
 */
public record OutboxEntry(long seq, UUID id, String type, String aggregateType, String aggregateId, boolean ordered,
    String payload, Map<String, String> headers, String destination, OutboxStatus status, int attempts,
    int attemptsSinceReplay, Instant availableAt, String leaseOwner, Instant leaseUntil, String lastError,
    Instant createdAt, Instant finishedAt, List<OutboxAttempt> history) {

  public Optional<Instant> finished() {
    return Optional.ofNullable(finishedAt);
  }

  /**
   * Whether {@link #payload()} is a sealed envelope: the outbox that listed it could not open it (see the event's
   * last error), or the entry comes straight from a store.
   */
  public boolean payloadSealed() {
    return Encryption.isSealed(payload);
  }
}
