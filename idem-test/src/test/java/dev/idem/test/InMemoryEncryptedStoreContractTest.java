package dev.idem.test;

import dev.idem.core.memory.InMemoryIdempotencyStore;
import dev.idem.core.spi.IdempotencyStore;

class InMemoryEncryptedStoreContractTest extends EncryptedStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    return new InMemoryIdempotencyStore("memory");
  }
}
