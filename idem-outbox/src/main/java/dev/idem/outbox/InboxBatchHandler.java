package dev.idem.outbox;

import java.sql.Connection;
import java.util.List;

/**
 * A consumer's effects for all new events of a batch at once (one JDBC batch, one bulk call), run by
 * {@link Inbox#processBatchAtOnce} once per batch that has new events, on the caller's connection and transaction. Called
 * from the thread that runs the batch.
 */
@FunctionalInterface
public interface InboxBatchHandler {
  /**
   * Applies the new events.
   *
   * @param connection the caller's connection, in the transaction the inbox rows were written in
   * @param fresh the events not processed before, in the batch's order, each id once; never empty, unmodifiable
   * @return one result per event of {@code fresh}, in order (null elements allowed; each at most
   *     {@link Inbox.Builder#maxResultChars} characters), returned again to duplicates; a null list means all null
   * @throws Exception to roll back: the caller's transaction must not commit, and the whole batch will be processed
   *     again
   */
  List<String> handle(Connection connection, List<InboxEvent> fresh) throws Exception;
}
