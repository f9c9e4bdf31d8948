package dev.idem.client;

import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import dev.idem.retry.RetryPolicy;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;

/** A fake clock, a recording sleeper, an HTTP/1.1 transport and an attempt listener, for one test. */
final class ClientFixture {
  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  final MutableClock clock = new MutableClock();
  final RecordingSleeper sleeper = new RecordingSleeper(clock);
  final List<Attempt> heard = new CopyOnWriteArrayList<>();

  /** Attempts 5, no jitter, 100 ms doubling to 1 s, deadline 30 s. */
  static RetryPolicy<Object> policy() {
    return RetryPolicy.builder()
        .maxAttempts(5)
        .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), Jitter.NONE))
        .deadline(Duration.ofSeconds(30))
        .build();
  }

  IdempotentHttpClient.Builder builder() {
    return IdempotentHttpClient.builder()
        .name("test-client")
        .httpClient(HTTP)
        .policy(policy())
        .clock(clock)
        .sleeper(sleeper)
        .random(new SplittableRandom(42).split())
        .listener((client, key, attempt) -> heard.add(attempt));
  }

  IdempotentHttpClient client() {
    return builder().build();
  }
}
