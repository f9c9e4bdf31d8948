package dev.idem.nats;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.time.Duration;

/**
 * The NATS server with JetStream the tests run on: {@code idem.test.nats.url}, by default {@code nats://127.0.0.1:4222}.
 * It must be reachable: a test that cannot connect fails, it never skips.
 */
final class NatsServer {
  private NatsServer() {}

  static String url() {
    return System.getProperty("idem.test.nats.url", "nats://127.0.0.1:4222");
  }

  static Connection connect() {
    Options options = Options.builder().server(url()).connectionTimeout(Duration.ofSeconds(5))
        .connectionName("idem-test").build();
    try {
      return Nats.connect(options);
    } catch (IOException e) {
      throw new IllegalStateException("NATS is not reachable at " + url() + " (idem.test.nats.url). Start it with"
          + " JetStream (bash .ci/run does) and run the tests again; tests that need a broker never skip.", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to NATS", e);
    }
  }
}
