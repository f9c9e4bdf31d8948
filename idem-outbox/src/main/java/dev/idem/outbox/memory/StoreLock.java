package dev.idem.outbox.memory;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/** The lock of an in-memory store, with the lock-run-unlock of every store operation in one place. */
final class StoreLock extends ReentrantLock {
  /** Runs {@code action} holding the lock and returns what it returns. */
  <T> T call(Supplier<T> action) {
    lock();
    try {
      return action.get();
    } finally {
      unlock();
    }
  }

  /** Runs {@code action} holding the lock. */
  void run(Runnable action) {
    call(() -> {
      action.run();
      return null;
    });
  }
}
