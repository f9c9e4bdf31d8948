package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.client.spi.PendingJournal;
import dev.idem.core.Deadline;
import dev.idem.retry.RetryDeadlineExceededException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A call made under {@link Deadline#current()} uses the smaller of that deadline and its own. */
class DeadlineInheritanceTest {
  private final ClientFixture fixture = new ClientFixture();

  private static byte[] body() {
    return "{\"amount\":5}".getBytes(StandardCharsets.UTF_8);
  }

  private static long header(TestServer server, int i) {
    return Long.parseLong(server.received.get(i).header(IdempotentHttpClient.REQUEST_TIMEOUT_HEADER));
  }

  @Test
  void withoutACurrentDeadlineThePolicysDeadlineIsSent() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(header(server, 0)).isEqualTo(30_000);
    }
  }

  @Test
  void aSmallerCurrentDeadlineShrinksTheSentBudget() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201));
        Deadline.Binding b = Deadline.after(Duration.ofMillis(800)).enter()) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(header(server, 0)).isBetween(1L, 800L);
    }
  }

  @Test
  void aLargerCurrentDeadlineDoesNotStretchThePolicys() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201));
        Deadline.Binding b = Deadline.after(Duration.ofMinutes(10)).enter()) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(header(server, 0)).isEqualTo(30_000);
    }
  }

  @Test
  void anIntentTimeoutAndTheCurrentDeadlineTakeTheSmaller() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      IdempotentHttpClient client = fixture.client();

      try (Deadline.Binding b = Deadline.after(Duration.ofSeconds(20)).enter()) {
        client.send(Intent.post(server.uri("/pay"), body()).withTimeout(Duration.ofSeconds(2)));
        client.send(Intent.post(server.uri("/pay"), body()).withTimeout(Duration.ofSeconds(25)));
      }

      assertThat(header(server, 0)).isEqualTo(2_000);
      assertThat(header(server, 1)).isBetween(15_000L, 20_000L);
    }
  }

  @Test
  void theCurrentDeadlineAlsoBoundsTheRetries() throws IOException {
    // A frozen nano source: the inherited budget is exactly 250 ms when the call starts, then runs on the client's
    // clock.
    AtomicLong nanos = new AtomicLong();
    Deadline inherited = Deadline.after(Duration.ofMillis(250), nanos::get);
    try (TestServer server = new TestServer(Reply.status(503));
        Deadline.Binding b = inherited.enter()) {
      IdempotentHttpClient client = fixture.client();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class)
          .hasCauseInstanceOf(RetryDeadlineExceededException.class);

      // backoff 100 ms then 200 ms: the second delay would end past 250 ms, so only 2 attempts of the policy's 5
      assertThat(server.received).hasSize(2);
      assertThat(header(server, 0)).isEqualTo(250);
      assertThat(header(server, 1)).isEqualTo(150);
      assertThat(fixture.sleeper.delays).containsExactly(Duration.ofMillis(100));
    }
  }

  @Test
  void anExpiredCurrentDeadlineFailsFastWithoutSending() throws IOException {
    AtomicLong nanos = new AtomicLong();
    Deadline inherited = Deadline.after(Duration.ofMillis(5), nanos::get);
    nanos.addAndGet(Duration.ofMillis(7).toNanos());
    try (TestServer server = new TestServer(Reply.status(201));
        Deadline.Binding b = inherited.enter()) {
      IdempotentHttpClient client = fixture.client();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class)
          .hasCauseInstanceOf(RetryDeadlineExceededException.class)
          .hasMessageContaining("passed 2 ms ago")
          .hasMessageContaining("nothing was sent")
          .satisfies(e -> assertThat(((IntentPendingException) e).attempts()).isEmpty());
      assertThatThrownBy(() -> client.send(Intent.get(server.uri("/pay/1"))))
          .isInstanceOf(IntentPendingException.class);
      assertThat(server.received).isEmpty();
      assertThat(fixture.heard).isEmpty();
    }
  }

  @Test
  void lessThanAMillisecondLeftCountsAsPassed() throws IOException {
    AtomicLong nanos = new AtomicLong();
    Deadline inherited = Deadline.after(Duration.ofNanos(999_999), nanos::get);
    try (TestServer server = new TestServer(Reply.status(201));
        Deadline.Binding b = inherited.enter()) {
      assertThatThrownBy(() -> fixture.client().send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class)
          .hasMessageContaining("leaves less than 1 ms");
      assertThat(server.received).isEmpty();
    }
  }

  @Test
  void anIntentNeverSentBecauseItsDeadlinePassedIsNotJournaled(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws IOException {
    AtomicLong nanos = new AtomicLong();
    Deadline inherited = Deadline.after(Duration.ofMillis(5), nanos::get);
    nanos.addAndGet(Duration.ofMillis(7).toNanos());
    try (TestServer server = new TestServer(Reply.status(201));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"));
        Deadline.Binding b = inherited.enter()) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class).hasMessageContaining("nothing was sent");

      assertThat(journal.pending()).as("nothing to resume: it was never sent").isEmpty();
      assertThat(server.received).isEmpty();
    }
  }

  /**
   * The deadline runs out while the intent is being journaled (a slow fsync or insert): nothing was sent, so the
   * intent leaves the journal again and a later resumePending() sends nothing the caller gave up on.
   */
  @Test
  void aDeadlineThatRunsOutWhileJournalingLeavesNothingToResume(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
    AtomicLong nanos = new AtomicLong();
    Deadline inherited = Deadline.after(Duration.ofMillis(5), nanos::get);
    try (TestServer server = new TestServer(Reply.status(201));
        FileJournal file = FileJournal.open(dir.resolve("pending.journal"))) {
      PendingJournal slow = new PendingJournal() {
        @Override
        public void append(Intent intent) {
          file.append(intent);
          nanos.addAndGet(Duration.ofMillis(10).toNanos()); // the append took 10 ms
        }

        @Override
        public void complete(String key) {
          file.complete(key);
        }

        @Override
        public java.util.List<Intent> pending() {
          return file.pending();
        }

        @Override
        public void close() {
          file.close();
        }
      };
      IdempotentHttpClient client = fixture.builder().journal(slow).build();

      try (Deadline.Binding b = inherited.enter()) {
        assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
            .isInstanceOf(IntentPendingException.class)
            .hasCauseInstanceOf(RetryDeadlineExceededException.class)
            .satisfies(e -> assertThat(((IntentPendingException) e).attempts()).isEmpty());
      }

      assertThat(file.pending()).as("never sent: nothing to resume").isEmpty();
      assertThat(client.resumePending()).isEmpty();
      assertThat(server.received).isEmpty();
    }
  }
}
