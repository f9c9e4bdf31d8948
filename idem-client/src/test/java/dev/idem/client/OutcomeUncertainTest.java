package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 409 {@code CONFLICT.idempotency.outcome_uncertain}: the server does not know what the first request with the key
 * did, and will not guess. The call is not retried now, and the intent stays pending; once the server has decided, a
 * resume sends the same key again and gets the decided answer, which completes the intent.
 */
class OutcomeUncertainTest {
  private final ClientFixture fixture = new ClientFixture();

  @TempDir
  Path dir;

  @Test
  void leavesTheIntentPendingUntilTheServerHasDecided() throws Exception {
    try (TestServer server = new TestServer(
        Reply.problem(409, "CONFLICT.idempotency.outcome_uncertain", false), Reply.status(201));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).build();
      Intent intent = Intent.post(server.uri("/pay"), "{\"amount\":5}".getBytes(StandardCharsets.UTF_8))
          .withKey("order-11");

      assertThatThrownBy(() -> client.send(intent)).isInstanceOfSatisfying(IntentPendingException.class, e -> {
        assertThat(e.lastResponse()).hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(409));
        assertThat(e.getCause()).hasMessageContaining("order-11").hasMessageContaining("uncertain");
      });
      assertThat(server.received).hasSize(1);
      assertThat(journal.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("order-11");

      assertThat(client.resumePending()).singleElement().satisfies(r -> {
        assertThat(r.isCompleted()).isTrue();
        assertThat(r.response()).hasValueSatisfying(resp -> assertThat(resp.status()).isEqualTo(201));
      });
      assertThat(server.headerValues("Idempotency-Key")).containsExactly("order-11", "order-11");
      assertThat(journal.pending()).isEmpty();
    }
  }
}
