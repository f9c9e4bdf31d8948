package dev.idem.test.outbox;

import dev.idem.core.spi.StoreTransaction;

/** A transaction of no store, which every store must refuse to write in. */
final class ForeignTransaction implements StoreTransaction {
  @Override
  public <T> T unwrap(Class<T> type) {
    throw new IllegalArgumentException("a foreign transaction holds no " + type.getName());
  }

  @Override
  public void setRollbackOnly() {}

  @Override
  public boolean isRollbackOnly() {
    return false;
  }
}
