package dev.idem.outbox.spi;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.OutboxEvent;
import java.time.Instant;
import java.util.Collection;
import java.util.List;

/**
 * Where outbox events live between the business transaction that wrote them and their delivery.
 *
 * <p>{@link #enqueue} writes in the caller's transaction, so an event exists if and only if that transaction
 * commits. A relay {@link #claim claims} due events under a lease with a token of its own, sends them outside any
 * transaction, then {@link #finish finishes} or {@link #release releases} them; both change only events still leased
 * to that token, so a relay whose lease ran out cannot overwrite the work of the relay that took its events over. An
 * event stays leased to a token until it is finished, released or discarded, or another token claims it: a lease that
 * ran out while no other claim took the event still lets its holder finish or release it.
 *
 * <p>Implementations are thread-safe, and any number of relays (in one process or many) may claim at once: a claim
 * skips events another claim holds, it does not wait for them.
 */
public interface OutboxStore {

  /** The store's name, in log lines and exception messages. */
  String name();

  /**
   * Runs the work in a new transaction of this store and commits it, unless the work throws or marked the
   * transaction rollback-only. Exceptions from the work propagate unchanged.
   */
  <R> R inTransaction(TransactionWork<R> work) throws Exception;

  /**
   * Writes the events in {@code tx}, the caller's open transaction; they become claimable when it commits.
   *
   * @param now the time of the write: {@code created_at}, and when an event without a later due time is due
   * @throws IllegalStateException when {@code tx} is not an open transaction of this store's kind
   * @throws dev.idem.core.StoreException when the store refuses the write (an event id written before, say)
   */
  void enqueue(StoreTransaction tx, List<PendingEvent> events, Instant now);

  /**
   * Claims up to {@code limit} due pending events for {@code token} until {@code leaseUntil}, in one short
   * transaction of its own, oldest due first. An ordered event is due only when no older pending or dead event of
   * its aggregate is bound for the same destination.
   *
   * @param routes only events whose destination is one of these routes ({@code route} or {@code route:...}); empty
   *     for every destination
   * @return the claimed events, ordered by {@link ClaimedEvent#seq()}
   */
  List<ClaimedEvent> claim(String token, List<String> routes, Instant now, Instant leaseUntil, int limit);

  /**
   * Records a batch's outcome in one transaction: delivered events are marked delivered (or deleted), failed ones
   * get their next attempt or die, and each failure joins the event's attempt history. Only events still leased to
   * {@code token} change.
   *
   * @return how many events changed; fewer than given when a lease ran out and another relay took an event
   */
  int finish(String token, List<ClaimedEvent> delivered, List<FailedDelivery> failures, boolean deleteDelivered,
      Instant now);

  /**
   * Gives events back, due at {@code now}, without counting an attempt (a relay stopping with unsent events). Only
   * events still leased to {@code token} change.
   *
   * @return how many events changed
   */
  int release(String token, Collection<ClaimedEvent> events, Instant now);

  /** The operator side of this store: listing, replay, discard, purge and statistics, off the hot path. */
  OutboxAdmin admin();
}
