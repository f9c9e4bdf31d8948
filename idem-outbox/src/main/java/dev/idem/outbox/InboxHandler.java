package dev.idem.outbox;

import java.sql.Connection;

/**
 * A consumer's effect, run by {@link Inbox#process} on the caller's connection and transaction.
 */
@FunctionalInterface
public interface InboxHandler {
  /**
   * Applies the event.
   *
   * @param connection the caller's connection, in the transaction the inbox row was written in
   * @return a short result to keep (at most {@link Inbox.Builder#maxResultChars} characters), returned again to
   *     duplicates; may be null
   * @throws Exception to roll back: the caller's transaction must not commit, and the event will be processed again
   */
  String handle(Connection connection) throws Exception;
}
