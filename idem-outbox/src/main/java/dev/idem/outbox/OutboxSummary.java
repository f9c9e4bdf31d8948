package dev.idem.outbox;

import dev.idem.core.crypto.Encryption;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * An outbox row as a listing shows it: an {@link OutboxEntry} without its payload and headers, which a store does not
 * read for a listing (a payload may be megabytes, and a page holds up to {@value OutboxQuery#MAX_LIMIT} rows), but
 * with the payload's size. {@link Outbox#find} reads one event whole.
 *
 * @param seq the row's position: the pagination cursor and, for ordered types, the order within an aggregate
 * @param id the event id
 * @param type the event type
 * @param aggregateType the aggregate's type
 * @param aggregateId the aggregate's id
 * @param ordered whether the event waits for older events of its aggregate
 * @param payloadBytes the size of the payload as stored, in UTF-8 bytes: for a sealed payload, the size of its
 *     sealed text (larger than the JSON it holds)
 * @param payloadSealed whether the payload is stored sealed (an encrypted route)
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
 * @param history the newest failed attempts, oldest first
 */
public record OutboxSummary(long seq, UUID id, String type, String aggregateType, String aggregateId,
    boolean ordered, long payloadBytes, boolean payloadSealed, String destination, OutboxStatus status, int attempts,
    int attemptsSinceReplay, Instant availableAt, String leaseOwner, Instant leaseUntil, String lastError,
    Instant createdAt, Instant finishedAt, List<OutboxAttempt> history) {

  /**
   * The summary of an entry as a store holds it: its payload's size as stored (the entry's payload is the stored
   * text, sealed or not).
   */
  public static OutboxSummary of(OutboxEntry e) {
    return new OutboxSummary(e.seq(), e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.ordered(),
        utf8Length(e.payload()), Encryption.isSealed(e.payload()), e.destination(), e.status(), e.attempts(),
        e.attemptsSinceReplay(), e.availableAt(), e.leaseOwner(), e.leaseUntil(), e.lastError(), e.createdAt(),
        e.finishedAt(), e.history());
  }

  /** When it was delivered or discarded, if it was. */
  public Optional<Instant> finished() {
    return Optional.ofNullable(finishedAt);
  }

  /** The size of {@code text} in UTF-8 bytes (an unpaired surrogate counts as the 3 bytes of a replacement). */
  public static long utf8Length(String text) {
    if (text == null) {
      return 0;
    }
    long bytes = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }
}
