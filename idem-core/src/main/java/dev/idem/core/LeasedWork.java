package dev.idem.core;

/** The work of a leased execution: it runs under the record's lease, with no transaction. */
@FunctionalInterface
public interface LeasedWork {
  StoredResponse execute(IdempotencyKey key) throws Exception;
}
