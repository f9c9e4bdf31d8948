package dev.idem.test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.ConfigurationException;
import dev.idem.core.StoredResponse;
import dev.idem.core.memory.InMemoryIdempotencyStore;
import dev.idem.core.spi.IdempotencyStore;
import org.junit.jupiter.api.Test;

class InMemoryExecutorContractTest extends IdemExecutorContract {
  @Override
  protected IdempotencyStore createStore() {
    return new InMemoryIdempotencyStore("memory");
  }

  @Test
  void atomicModeIsRefusedOnAStoreWithoutTransactions() {
    assertThatThrownBy(() -> idem().atomic(request("x", "{}"), tx -> StoredResponse.of(200, "ok")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("store 'memory' has no transactions");
  }
}
