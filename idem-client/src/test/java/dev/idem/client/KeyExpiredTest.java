package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 422 {@code CONFLICT.idempotency.key_expired}: the key's answer is no longer kept. The call ends at once with a
 * typed {@link KeyExpiredException} (never a retry, never a generic response), and the intent leaves the journal:
 * its effect stands, and a new request needs a new key.
 */
class KeyExpiredTest {
  private final ClientFixture fixture = new ClientFixture();

  @TempDir
  Path dir;

  private static Reply keyExpired() {
    String json = "{\"type\":\"urn:idem:problem:CONFLICT.idempotency.key_expired\",\"title\":\"Idempotency-Key"
        + " expired\",\"status\":422,\"detail\":\"use a new key\",\"code\":\"CONFLICT.idempotency.key_expired\","
        + "\"retryable\":false,\"expired_at\":\"2026-11-26T10:00:00Z\"}";
    return new Reply(422, Map.of("Content-Type", "application/problem+json"), json, false);
  }

  @Test
  void endsTheCallWithATypedExceptionAfterOneAttemptAndCompletesTheIntent() throws Exception {
    try (TestServer server = new TestServer(keyExpired(), Reply.status(201));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();
      Intent intent = Intent.post(server.uri("/pay"), "{\"amount\":5}".getBytes(StandardCharsets.UTF_8))
          .withKey("order-9");

      assertThatThrownBy(() -> client.send(intent)).isInstanceOfSatisfying(KeyExpiredException.class, e -> {
        assertThat(e.key()).isEqualTo("order-9");
        assertThat(e.status()).isEqualTo(422);
        assertThat(e.detail()).isEqualTo("use a new key");
        assertThat(e.expiredAt()).isEqualTo("2026-11-26T10:00:00Z");
        assertThat(e.attempts()).hasSize(1);
        assertThat(e.getMessage()).contains("order-9", "new key");
      });
      assertThat(server.received).hasSize(1);
      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void aResumedIntentThatMeetsAnExpiredKeyIsCompleted() throws Exception {
    try (TestServer server = new TestServer(Reply.disconnect(), Reply.disconnect(), Reply.disconnect(),
        Reply.disconnect(), Reply.disconnect(), keyExpired());
        FileJournal journal = FileJournal.open(dir.resolve("resume.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();
      Intent intent = Intent.post(server.uri("/pay"), "{}".getBytes(StandardCharsets.UTF_8)).withKey("order-10");
      assertThatThrownBy(() -> client.send(intent)).isInstanceOf(IntentPendingException.class);
      assertThat(journal.pending()).hasSize(1);

      assertThat(client.resumePending()).singleElement().satisfies(r -> {
        assertThat(r.isCompleted()).isTrue();
        assertThat(r.failure()).containsInstanceOf(KeyExpiredException.class);
      });
      assertThat(journal.pending()).isEmpty();
    }
  }
}
