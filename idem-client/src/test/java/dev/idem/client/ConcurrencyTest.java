package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.client.TestServer.Reply;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One client and one journal shared by many threads. */
class ConcurrencyTest {
  @TempDir Path dir;

  @Test
  void sharedClientGivesEveryIntentItsOwnKeyAndCompletesEveryIntent() throws Exception {
    int threads = 8;
    int perThread = 25;
    try (TestServer server = new TestServer(Reply.status(201));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = IdempotentHttpClient.builder()
          .httpClient(ClientFixture.HTTP)
          .journal(journal)
          .sleeper(delay -> {})
          .build();
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<List<String>>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(pool.submit(() -> {
          List<String> keys = new ArrayList<>();
          for (int i = 0; i < perThread; i++) {
            Intent intent = Intent.post(server.uri("/pay"), ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
            keys.add(client.send(intent).key().orElseThrow());
          }
          return keys;
        }));
      }
      Set<String> keys = new HashSet<>();
      for (Future<List<String>> f : futures) {
        keys.addAll(f.get());
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(1, TimeUnit.MINUTES)).isTrue();

      assertThat(keys).hasSize(threads * perThread);
      assertThat(new HashSet<>(server.headerValues("Idempotency-Key"))).isEqualTo(keys);
      assertThat(journal.pending()).isEmpty();
    }
  }
}
