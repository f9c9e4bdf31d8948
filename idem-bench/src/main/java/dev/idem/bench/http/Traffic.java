package dev.idem.bench.http;

import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/** The requests of one scenario during a run: numbers them and picks keys and bodies. Thread-safe. */
final class Traffic {
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private final Scenario scenario;
  private final boolean[] expected = new boolean[600];
  private final AtomicLong sequence = new AtomicLong();

  Traffic(Scenario scenario) {
    this.scenario = scenario;
    scenario.expectedStatuses().forEach(s -> expected[s] = true);
  }

  Scenario scenario() {
    return scenario;
  }

  boolean expected(int status) {
    return status >= 0 && status < expected.length && expected[status];
  }

  /** Endless requests following the scenario's key strategy. */
  Supplier<HttpRequest> steady() {
    KeyStrategy keys = scenario.keys();
    return () -> {
      long n = sequence.getAndIncrement();
      return switch (keys.kind()) {
        case NONE -> request(null, (int) (n & Integer.MAX_VALUE));
        case UNIQUE -> request(KeyStrategy.randomKey(), (int) (n & Integer.MAX_VALUE));
        case FIXED_POOL -> {
          int slot = (int) Math.floorMod(n, (long) keys.poolSize());
          yield request(keys.poolKey(slot), slot);
        }
      };
    };
  }

  /** One request per pool key, then null; empty unless the strategy is a fixed pool. */
  Supplier<HttpRequest> poolOnce() {
    KeyStrategy keys = scenario.keys();
    int size = keys.kind() == KeyStrategy.Kind.FIXED_POOL ? keys.poolSize() : 0;
    AtomicInteger next = new AtomicInteger();
    return () -> {
      int slot = next.getAndIncrement();
      return slot < size ? request(keys.poolKey(slot), slot) : null;
    };
  }

  private HttpRequest request(String key, int bodyIndex) {
    HttpRequest.BodyPublisher publisher = scenario.hasBody()
        ? HttpRequest.BodyPublishers.ofByteArray(scenario.bodyFor(bodyIndex))
        : HttpRequest.BodyPublishers.noBody();
    HttpRequest.Builder b = HttpRequest.newBuilder(scenario.uri()).timeout(REQUEST_TIMEOUT)
        .method(scenario.method(), publisher);
    for (Map.Entry<String, String> h : scenario.headers()) {
      b.header(h.getKey(), h.getValue());
    }
    if (key != null) {
      b.header(KeyStrategy.HEADER, key);
    }
    return b.build();
  }
}
