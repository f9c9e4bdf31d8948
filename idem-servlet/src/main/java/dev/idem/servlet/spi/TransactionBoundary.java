package dev.idem.servlet.spi;

import dev.idem.servlet.IdempotentExchange;
import java.util.concurrent.Callable;

/**
 * Wraps the execution of an atomic or leased route, so that the record and the handler's writes can join a
 * transaction that a framework manages. The default runs the execution as it is: the store's own transaction is
 * the one the handler joins through {@link IdempotentExchange#transaction()}. The Spring Boot starter opens a
 * Spring transaction here and binds its connection to the store. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface TransactionBoundary {

  /** Runs {@code execution} (which calls the executor) and returns its result. */
  <T> T around(IdempotentExchange exchange, Callable<T> execution) throws Exception;

  /** No boundary: the store's transaction is the only one. */
  static TransactionBoundary none() {
    return new TransactionBoundary() {
      @Override
      public <T> T around(IdempotentExchange exchange, Callable<T> execution) throws Exception {
        return execution.call();
      }
    };
  }
}
