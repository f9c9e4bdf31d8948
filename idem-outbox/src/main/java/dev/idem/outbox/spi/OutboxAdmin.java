package dev.idem.outbox.spi;

import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxSummary;
import dev.idem.outbox.OutboxSummaryPage;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/** The operator side of an {@link OutboxStore}: each method runs in a short transaction of its own. */
public interface OutboxAdmin {

  /** One page of events matching {@code query}, by {@code seq}, each with its payload and attempt history. */
  OutboxPage list(OutboxQuery query);

  /**
   * The page {@link #list} answers, as summaries: each event with its attempt history and its payload's size as
   * stored ({@link OutboxSummary#payloadBytes}), but without its payload and headers, which a store should not read
   * at all (the operator console lists with this, up to {@value OutboxQuery#MAX_LIMIT} events a page). The default
   * reads them through {@link #list} and drops them: a store overrides it to leave them in the database.
   */
  default OutboxSummaryPage summaries(OutboxQuery query) {
    OutboxPage page = list(query);
    return new OutboxSummaryPage(page.entries().stream().map(OutboxSummary::of).toList(), page.nextCursor());
  }

  /** The event with this id, with its payload and attempt history. */
  Optional<OutboxEntry> find(UUID id);

  /**
   * {@link Outbox#replay}: the event is pending again, due at {@code now}, and {@code attemptBase} becomes
   * {@code attempts}; false when no such event exists or it is pending already.
   */
  boolean replay(UUID id, Instant now);

  /**
   * {@link Outbox#replayAll}: replays the events matching {@code filter} (a status other than pending), in batches of
   * {@code filter.limit()} events per transaction; returns how many.
   */
  int replayAll(OutboxQuery filter, Instant now);

  /**
   * {@link Outbox#discard}: a dead event, or a pending one whose lease (if any) ended at or before {@code now}, is
   * discarded, finished at {@code now}; false when no such event exists, it is finished already, or a relay holds it.
   */
  boolean discard(UUID id, Instant now);

  /**
   * {@link Outbox#purge}: deletes up to {@code limit} delivered or discarded events finished at or before
   * {@code finishedBefore}, with their history, without blocking relays; returns how many.
   */
  int purge(Instant finishedBefore, int limit);

  /** Events per status (only the given ones), and the age at {@code now} of the oldest pending event if asked for. */
  OutboxStats stats(Set<OutboxStatus> statuses, Instant now);
}
