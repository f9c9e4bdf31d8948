package dev.idem.test.outbox;

import dev.idem.outbox.memory.InMemoryOutboxStore;
import dev.idem.outbox.spi.OutboxStore;

class InMemoryOutboxStoreContractTest extends OutboxStoreContract {
  @Override
  protected OutboxStore createStore() {
    return new InMemoryOutboxStore();
  }
}
