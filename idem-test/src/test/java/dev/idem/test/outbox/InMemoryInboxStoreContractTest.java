package dev.idem.test.outbox;

import dev.idem.outbox.memory.InMemoryInboxStore;
import dev.idem.outbox.spi.InboxStore;

class InMemoryInboxStoreContractTest extends RecordingLastInboxStoreContract {
  @Override
  protected InboxStore createStore() {
    return new InMemoryInboxStore();
  }
}
