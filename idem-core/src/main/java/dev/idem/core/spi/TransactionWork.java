package dev.idem.core.spi;

/** Work that runs inside a store transaction. */
@FunctionalInterface
public interface TransactionWork<R> {
  R execute(StoreTransaction tx) throws Exception;
}
