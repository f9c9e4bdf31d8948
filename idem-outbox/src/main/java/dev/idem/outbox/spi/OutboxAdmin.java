package dev.idem.outbox.spi;

import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/** The operator side of an {@link OutboxStore}: each method runs in a short transaction of its own. */
public interface OutboxAdmin {

  /** One page of events matching {@code query}, by {@code seq}, each with its attempt history. */
  OutboxPage list(OutboxQuery query);

  /** The event with this id, with its attempt history. */
  Optional<OutboxEntry> find(UUID id);

  /**
   * Makes a dead, delivered or discarded event pending again, due at {@code now}, with a fresh set of attempts
   * ({@code attemptBase} becomes {@code attempts}); its history stays.
   *
   * @return false when no such event exists or it is pending already
   */
  boolean replay(UUID id, Instant now);

  /**
   * Replays every event matching {@code filter}, whose status is set and is not pending, in batches of
   * {@code filter.limit()} events per transaction.
   *
   * @return how many events were replayed
   */
  int replayAll(OutboxQuery filter, Instant now);

  /**
   * Gives up on a dead event, or a pending one whose lease (if any) ended at or before {@code now}: it becomes
   * discarded, finished at {@code now}.
   *
   * @return false when no such event exists, it is finished already, or a relay holds it
   */
  boolean discard(UUID id, Instant now);

  /**
   * Deletes up to {@code limit} delivered or discarded events finished at or before {@code finishedBefore}, with
   * their history, without blocking relays.
   *
   * @return how many were deleted; call again while it returns {@code limit}
   */
  int purge(Instant finishedBefore, int limit);

  /** Events per status (only the given ones), and the age at {@code now} of the oldest pending event if asked for. */
  OutboxStats stats(Set<OutboxStatus> statuses, Instant now);
}
