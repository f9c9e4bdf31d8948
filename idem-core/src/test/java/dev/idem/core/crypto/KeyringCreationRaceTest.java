package dev.idem.core.crypto;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression: instances starting together on a fresh data folder race to create the keyring. Each must end with the
 * same keys, never read the file while the winner is still writing it (an empty keyring, a start-up failure).
 */
class KeyringCreationRaceTest {
  @TempDir Path dir;

  @Test
  void racingCreatorsAllEndWithTheWinnersKeys() throws Exception {
    int racers = 4;
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    try {
      for (int i = 0; i < 300; i++) {
        Path file = dir.resolve("race-" + i + "/keyring");
        CyclicBarrier start = new CyclicBarrier(racers);
        List<Future<Keyring>> results = new ArrayList<>();
        for (int r = 0; r < racers; r++) {
          results.add(pool.submit(() -> {
            start.await();
            return Keyring.loadOrCreate(file, "k1");
          }));
        }

        byte[] sealed = Encryption.with(results.get(0).get()).seal("x".getBytes(UTF_8), new byte[0]);

        for (Future<Keyring> result : results) {
          assertThat(Encryption.with(result.get()).open(sealed, new byte[0])).isEqualTo("x".getBytes(UTF_8));
        }
        assertThat(Encryption.with(Keyring.load(file)).open(sealed, new byte[0])).isEqualTo("x".getBytes(UTF_8));
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
