package dev.idem.core;

import dev.idem.core.spi.StoreTransaction;

/** The business work of an atomic execution; it runs in the same transaction as the record's write. */
@FunctionalInterface
public interface AtomicWork {
  /**
   * Does the work with the transaction (a JDBC store's unwraps to its {@code Connection}) and returns the answer.
   * Throwing rolls everything back and frees the key.
   */
  StoredResponse execute(StoreTransaction tx) throws Exception;
}
