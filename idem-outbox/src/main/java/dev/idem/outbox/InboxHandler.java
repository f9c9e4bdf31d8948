package dev.idem.outbox;

import dev.idem.core.spi.StoreTransaction;
import java.util.ArrayList;
import java.util.List;

/**
 * The effect of an event, run by the {@link Inbox} once per event id in the transaction that records it. For a JDBC
 * inbox, {@code tx.unwrap(Connection.class)} is the connection to write the effect on (do not commit, roll back or
 * close it: in a transaction the store owns, it refuses to).
 *
 * <p>The one handler type of the message side: broker consumers hand it the broker's message through
 * {@link InboxEvent#message(Class)}.
 */
@FunctionalInterface
public interface InboxHandler {

  /**
   * Applies the event's effect in {@code tx}.
   *
   * @return a short result to keep for duplicates (at most the inbox's {@code maxResultChars}), or null
   * @throws Exception to roll the transaction back: nothing of the event counts, and a redelivery runs it again
   */
  String handle(StoreTransaction tx, InboxEvent event) throws Exception;

  /**
   * Applies the effects of a batch's new events at once, in {@code tx}. The default calls {@link #handle} for each,
   * in order (the inbox then names the event a failure happened on); override it for effects that are cheaper in bulk
   * (one multi-row insert).
   *
   * @param events the batch's new events, in the batch's order; never empty
   * @return one result per event, in order (null entries keep nothing), or null to keep none
   */
  default List<String> handleAll(StoreTransaction tx, List<InboxEvent> events) throws Exception {
    List<String> results = new ArrayList<>(events.size());
    for (InboxEvent event : events) {
      results.add(handle(tx, event));
    }
    return results;
  }
}
