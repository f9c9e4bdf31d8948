package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.client.spi.PendingJournal;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client and its journal: written before the first send, completed on a final answer, resumed after restart. */
class ResumeTest {
  @TempDir Path dir;
  private final ClientFixture fixture = new ClientFixture();

  private static byte[] body(int n) {
    return ("{\"amount\":" + n + "}").getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void intentIsJournaledBeforeTheFirstSend() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (TestServer server = new TestServer(Reply.status(201));
        FileJournal journal = FileJournal.open(file)) {
      List<List<Intent>> seenDuringSend = new java.util.ArrayList<>();
      IdempotentHttpClient client = fixture.builder()
          .journal(journal)
          .listener((c, key, attempt) -> seenDuringSend.add(journal.pending()))
          .build();

      Response response = client.send(Intent.post(server.uri("/pay"), body(1)));

      assertThat(seenDuringSend).singleElement().satisfies(pending -> assertThat(pending)
          .extracting(i -> i.key().orElseThrow()).containsExactly(response.key().orElseThrow()));
      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void finalAnswersCompleteTheIntentIncludingErrorsAndMismatches() throws IOException {
    try (TestServer server = new TestServer(
        Reply.status(400), Reply.problem(422, IdempotentHttpClient.PAYLOAD_MISMATCH, false));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();

      client.send(Intent.post(server.uri("/pay"), body(1)));
      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body(2))))
          .isInstanceOf(PayloadMismatchException.class);

      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void safeAndKeylessIntentsAreNotJournaled() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();

      client.send(Intent.post(server.uri("/pay"), body(1)).withoutKey());
      assertThatThrownBy(() -> client.send(Intent.get(server.uri("/pay/1"))))
          .isInstanceOf(IntentPendingException.class);

      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void secretsAreNeverWrittenToTheJournal() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (TestServer server = new TestServer(Reply.status(503));
        FileJournal journal = FileJournal.open(file)) {
      IdempotentHttpClient client = fixture.builder()
          .journal(journal)
          .headers(() -> Map.of("X-Api-Key-From-Config", "config-secret-1"))
          .build();
      Intent intent = Intent.post(server.uri("/pay"), body(1))
          .withHeader("Authorization", "Bearer secret-token-2")
          .withHeader("cookie", "session=secret-cookie-3")
          .withHeader("Proxy-Authorization", "Basic secret-proxy-4")
          .withHeader("X-Trace", "visible-5");

      assertThatThrownBy(() -> client.send(intent)).isInstanceOf(IntentPendingException.class);

      String bytes = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
      assertThat(bytes).contains("visible-5", "{\"amount\":1}")
          .doesNotContain("secret-token-2", "secret-cookie-3", "secret-proxy-4", "config-secret-1")
          .doesNotContainIgnoringCase("authorization").doesNotContainIgnoringCase("cookie");
      assertThat(server.received.get(0).header("Authorization")).isEqualTo("Bearer secret-token-2");
    }
  }

  @Test
  void resumePendingResendsWithTheOriginalKeyAndClearsTheJournal() throws IOException {
    Path file = dir.resolve("pending.journal");
    String originalKey;
    try (TestServer server = new TestServer(Reply.disconnect())) {
      // first process: every attempt fails, the intents stay pending
      try (FileJournal journal = FileJournal.open(file)) {
        IdempotentHttpClient client = fixture.builder().journal(journal).build();
        IntentPendingException pending = org.junit.jupiter.api.Assertions.assertThrows(
            IntentPendingException.class,
            () -> client.send(Intent.post(server.uri("/pay"), body(7)).withHeader("Authorization", "Bearer old")));
        originalKey = pending.key().orElseThrow();
        assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body(8)).withKey("caller-8")))
            .isInstanceOf(IntentPendingException.class);
      }
      server.received.clear();
      server.script(Reply.status(201));

      // second process: a new journal instance and a new client, with the credentials of now
      try (FileJournal journal = FileJournal.open(file)) {
        IdempotentHttpClient client = fixture.builder()
            .journal(journal)
            .headers(() -> Map.of("Authorization", "Bearer fresh"))
            .build();
        assertThat(journal.pending()).hasSize(2);

        List<Resumed> resumed = client.resumePending();

        assertThat(resumed).allSatisfy(r -> assertThat(r.isCompleted()).isTrue());
        assertThat(resumed).extracting(r -> r.response().orElseThrow().status()).containsExactly(201, 201);
        assertThat(server.headerValues("Idempotency-Key")).containsExactly(originalKey, "caller-8");
        assertThat(server.received).extracting(TestServer.Received::bodyText)
            .containsExactly("{\"amount\":7}", "{\"amount\":8}");
        assertThat(server.headerValues("Authorization")).containsOnly("Bearer fresh");
        assertThat(server.headerValues("Idempotency-Attempt")).as("a resend is never a first attempt")
            .containsExactly("2", "2");
        assertThat(journal.pending()).isEmpty();
      }
      assertThat(Files.size(file)).isZero();
    }
  }

  @Test
  void resumedIntentThatFailsAgainStaysPending() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (TestServer server = new TestServer(Reply.status(503));
        FileJournal journal = FileJournal.open(file)) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();
      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body(1))))
          .isInstanceOf(IntentPendingException.class);

      List<Resumed> resumed = client.resumePending();

      assertThat(resumed).singleElement().satisfies(r -> {
        assertThat(r.isCompleted()).isFalse();
        assertThat(r.failure()).containsInstanceOf(IntentPendingException.class);
      });
      assertThat(journal.pending()).hasSize(1);
    }
  }

  @Test
  void aRetryShedByTheServersBudgetLeavesTheIntentPending() throws IOException {
    // attempt 1 times out on the client (its effect may have happened), attempt 2 is shed before its key is read
    try (TestServer server = new TestServer(Reply.status(503),
        Reply.problem(503, "TRANSIENT.retry_budget_exhausted", false), Reply.status(201));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body(1))))
          .isInstanceOf(IntentPendingException.class).hasMessageContaining("retry budget");

      assertThat(journal.pending()).as("the outcome is unknown: resend with the same key later").hasSize(1);
      assertThat(server.received).hasSize(2);
      assertThat(client.resumePending()).singleElement().satisfies(r -> assertThat(r.response())
          .hasValueSatisfying(answer -> assertThat(answer.status()).isEqualTo(201)));
      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void aResumedIntentShedByTheServersBudgetStaysPending() throws IOException {
    // an earlier process sent it (its effect may have happened); the resend is shed before its key is read
    try (TestServer server = new TestServer(Reply.disconnect());
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();
      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body(1))))
          .isInstanceOf(IntentPendingException.class);
      server.received.clear();
      server.script(Reply.problem(503, "TRANSIENT.retry_budget_exhausted", false));

      List<Resumed> resumed = client.resumePending();

      assertThat(resumed).singleElement().satisfies(r -> {
        assertThat(r.isCompleted()).isFalse();
        assertThat(r.failure()).hasValueSatisfying(e -> assertThat(e)
            .isInstanceOf(IntentPendingException.class).hasMessageContaining("retry budget"));
      });
      assertThat(server.received).hasSize(1);
      assertThat(journal.pending()).as("the outcome is still unknown").hasSize(1);
    }
  }

  @Test
  void aCompletionTheJournalCannotWriteStillReturnsTheAnswerAndLeavesTheIntentToResume() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201), Reply.status(201));
        FileJournal file = FileJournal.open(dir.resolve("pending.journal"))) {
      PendingJournal failingCompletions = new PendingJournal() {
        @Override
        public void append(Intent intent) {
          file.append(intent);
        }

        @Override
        public void complete(String key) {
          throw new JournalException("journal: recording the completion of key " + key + " failed: disk full");
        }

        @Override
        public List<Intent> pending() {
          return file.pending();
        }

        @Override
        public void close() {
          file.close();
        }
      };
      IdempotentHttpClient client = fixture.builder().journal(failingCompletions).build();

      Response response = client.send(Intent.post(server.uri("/pay"), body(1)));

      assertThat(response.status()).as("the answer is not lost").isEqualTo(201);
      assertThat(file.pending()).extracting(i -> i.key().orElseThrow())
          .containsExactly(response.key().orElseThrow());
    }
  }

  @Test
  void extensionMethodsAreUnsafeKeyedJournaledAndRetried() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();

      Response response = client.send(Intent.of("LOCK", server.uri("/files/1")));

      assertThat(Intent.of("lock", server.uri("/files/1")).isUnsafe()).isTrue();
      assertThat(Intent.of("OPTIONS", server.uri("/files/1")).isUnsafe()).isFalse();
      assertThat(response.status()).isEqualTo(201);
      assertThat(server.headerValues("Idempotency-Key")).hasSize(2).containsOnly(response.key().orElseThrow());
      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void anExtensionMethodWithoutAKeyIsSentOnce() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      Response response = fixture.client().send(Intent.of("MOVE", server.uri("/files/1")).withoutKey());

      assertThat(response.status()).isEqualTo(503);
      assertThat(server.received).hasSize(1);
    }
  }
}
