package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.retry.RetryBudget;
import dev.idem.retry.RetryBudgetExhaustedException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Against a server that fails 100%, budgets keep the total attempts within the configured ratio. */
class BudgetTest {
  private static final int INTENTS = 100;
  private final ClientFixture fixture = new ClientFixture();

  private List<IntentPendingException> sendAll(IdempotentHttpClient client, TestServer server) {
    List<IntentPendingException> failures = new ArrayList<>();
    for (int i = 0; i < INTENTS; i++) {
      Intent intent = Intent.post(server.uri("/pay"), ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
      try {
        client.send(intent);
      } catch (IntentPendingException e) {
        failures.add(e);
      }
    }
    return failures;
  }

  @Test
  void ratioBudgetCapsRetriesAtTenPercentOfRequests() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      IdempotentHttpClient client = fixture.builder()
          .budgetPerDestination(() -> RetryBudget.ratio(0.1, 0, Duration.ofHours(1), fixture.clock))
          .build();

      List<IntentPendingException> failures = sendAll(client, server);

      assertThat(failures).hasSize(INTENTS);
      assertThat(server.received.size()).isBetween(INTENTS, INTENTS + INTENTS / 10);
      assertThat(failures).anySatisfy(e -> assertThat(e.getCause()).isInstanceOf(RetryBudgetExhaustedException.class));
      assertThat(client.retryBudget(server.uri("/"))).isPresent();
    }
  }

  @Test
  void tokenBucketStopsRetriesWhenFailuresDominate() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      IdempotentHttpClient client = fixture.builder()
          .budgetPerDestination(() -> RetryBudget.tokenBucket(10, 0.1))
          .build();

      List<IntentPendingException> failures = sendAll(client, server);

      // 10 tokens, retries only above 5: at most 5 retries before the bucket stays at or below half
      assertThat(server.received.size()).isBetween(INTENTS, INTENTS + 5);
      assertThat(failures.get(INTENTS - 1).getCause()).isInstanceOf(RetryBudgetExhaustedException.class);
      assertThat(failures.get(INTENTS - 1).attempts()).singleElement()
          .satisfies(a -> assertThat(a.notes()).contains("retry budget refused"));
    }
  }

  @Test
  void withoutBudgetEveryIntentUsesAllAttempts() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      List<IntentPendingException> failures = sendAll(fixture.client(), server);

      assertThat(failures).hasSize(INTENTS);
      assertThat(server.received).hasSize(INTENTS * 5);
    }
  }

  @Test
  void budgetsAreKeptPerDestination() throws IOException {
    try (TestServer failing = new TestServer(Reply.status(503));
        TestServer healthy = new TestServer(Reply.status(503), Reply.status(200))) {
      IdempotentHttpClient client = fixture.builder()
          .budgetPerDestination(() -> RetryBudget.tokenBucket(10, 0.1))
          .build();
      sendAll(client, failing);

      Response response = client.send(Intent.post(healthy.uri("/pay"), new byte[] {1}));

      assertThat(response.status()).isEqualTo(200);
      assertThat(response.attempts()).hasSize(2);
    }
  }

  @Test
  void budgetRefusalIsReportedAsPendingWithTheCause() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      IdempotentHttpClient client = fixture.builder()
          .budgetPerDestination(() -> RetryBudget.ratio(0.0, 0, Duration.ofMinutes(1), fixture.clock))
          .build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), new byte[] {1})))
          .isInstanceOf(IntentPendingException.class)
          .hasCauseInstanceOf(RetryBudgetExhaustedException.class)
          .hasMessageContaining("retry budget refused");
      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void theBudgetsOfTheDestinationsUsedLastAreKeptAndNoMore() {
    IdempotentHttpClient client = fixture.builder()
        .budgetPerDestination(() -> RetryBudget.tokenBucket(10, 0.1))
        .build();
    int destinations = IdempotentHttpClient.MAX_BUDGETS + 10;
    List<URI> uris = new ArrayList<>();
    for (int i = 0; i < destinations; i++) {
      // loopback addresses nobody listens on: each call is refused at once
      uris.add(URI.create("http://127.0." + (1 + i / 250) + "." + (1 + i % 250) + ":9/status"));
    }

    for (URI uri : uris) {
      assertThatThrownBy(() -> client.send(Intent.get(uri))).isInstanceOf(IntentPendingException.class);
    }

    assertThat(client.retryBudget(uris.get(0))).as("the least recently used destination's").isEmpty();
    assertThat(client.retryBudget(uris.get(9))).isEmpty();
    assertThat(client.retryBudget(uris.get(10))).isPresent();
    assertThat(client.retryBudget(uris.get(destinations - 1))).isPresent();
  }
}
