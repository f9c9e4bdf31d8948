package dev.idem.outbox;

import java.sql.Connection;

/**
 * A consumer's effect for one event of a batch, run by {@link Inbox#processBatch} once per new event, in the batch's
 * order, on the caller's connection and transaction. Called from the thread that runs the batch.
 */
@FunctionalInterface
public interface InboxEventHandler {
  /**
   * Applies one event.
   *
   * @param connection the caller's connection, in the transaction the inbox rows were written in
   * @param event the new event
   * @return a short result to keep (at most {@link Inbox.Builder#maxResultChars} characters), returned again to
   *     duplicates; may be null
   * @throws Exception to roll back: the caller's transaction must not commit, and the whole batch will be processed
   *     again
   */
  String handle(Connection connection, InboxEvent event) throws Exception;
}
