package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.client.spi.PendingJournal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What every {@link PendingJournal} must do. Each implementation's test extends this. */
abstract class PendingJournalContractTest {
  /** A journal over fresh, empty storage that {@link #reopen()} will see. */
  abstract PendingJournal open();

  /** A new instance over the storage of the last {@link #open()}, as after a restart. */
  abstract PendingJournal reopen();

  static Intent intent(String key, String body) {
    return Intent.post(URI.create("http://127.0.0.1:8080/payments?x=1"), body.getBytes(StandardCharsets.UTF_8))
        .withHeader("Content-Type", "application/json")
        .withHeader("X-Tenant", "t-\u00fc")
        .withKey(key);
  }

  static void assertSameIntent(Intent actual, Intent expected) {
    assertThat(actual.method()).isEqualTo(expected.method());
    assertThat(actual.uri()).isEqualTo(expected.uri());
    assertThat(actual.key()).isEqualTo(expected.key());
    assertThat(actual.headers()).isEqualTo(expected.headers());
    assertThat(actual.body()).isEqualTo(expected.body());
  }

  private static List<String> keys(PendingJournal journal) {
    return journal.pending().stream().map(i -> i.key().orElseThrow()).toList();
  }

  @Test
  void appendCompleteAndPendingRoundTrip() {
    try (PendingJournal journal = open()) {
      journal.append(intent("k1", "{\"a\":1}"));
      journal.append(intent("k2", "{\"a\":2}"));
      journal.append(intent("k3", "{\"a\":3}"));

      journal.complete("k2");

      assertThat(keys(journal)).containsExactly("k1", "k3");
      assertSameIntent(journal.pending().get(1), intent("k3", "{\"a\":3}"));
    }
  }

  @Test
  void aBodyThatBeginsLikeASealedEnvelopeReadsBackAsItWasSent() {
    byte[] body = {0x00, 'i', 'e', 0x01, 0x00, 0x05, 'k', '-', '1', (byte) 0xff, 0x7f};
    Intent binary = Intent.post(URI.create("http://127.0.0.1:8080/uploads"), body)
        .withHeader("Content-Type", "application/octet-stream").withKey("bin-1");
    try (PendingJournal journal = open()) {
      journal.append(binary);
      journal.append(binary);

      assertThat(journal.pending()).hasSize(1);
      assertSameIntent(journal.pending().get(0), binary);
    }
    try (PendingJournal reopened = reopen()) {
      assertSameIntent(reopened.pending().get(0), binary);
    }
  }

  @Test
  void reopenedJournalSeesThePendingIntents() {
    try (PendingJournal journal = open()) {
      journal.append(intent("k1", "{\"a\":1}"));
      journal.append(intent("k2", "{\"a\":2}"));
      journal.complete("k1");
    }

    try (PendingJournal reopened = reopen()) {
      assertThat(reopened.pending()).hasSize(1);
      assertSameIntent(reopened.pending().get(0), intent("k2", "{\"a\":2}"));
    }
  }

  @Test
  void appendingAPendingKeyAgainAndCompletingAnUnknownKeyAreNoOps() {
    try (PendingJournal journal = open()) {
      journal.append(intent("k1", "{}"));

      journal.append(intent("k1", "{}"));
      journal.complete("unknown");

      assertThat(keys(journal)).containsExactly("k1");
    }
    try (PendingJournal reopened = reopen()) {
      assertThat(keys(reopened)).containsExactly("k1");
    }
  }

  @Test
  void concurrentAppendsAndCompletionsAreAllKept() throws Exception {
    int threads = 8;
    int perThread = 50;
    try (PendingJournal journal = open()) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          for (int i = 0; i < perThread; i++) {
            String key = "t" + thread + "-" + i;
            journal.append(intent(key, "{\"i\":" + i + "}"));
            if (i % 2 == 0) {
              journal.complete(key);
            }
          }
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(1, TimeUnit.MINUTES)).isTrue();

      assertThat(journal.pending()).hasSize(threads * perThread / 2);
    }
    try (PendingJournal reopened = reopen()) {
      assertThat(reopened.pending()).hasSize(threads * perThread / 2)
          .allSatisfy(i -> assertThat(Integer.parseInt(i.key().orElseThrow().split("-")[1]) % 2).isOne());
    }
  }
}
