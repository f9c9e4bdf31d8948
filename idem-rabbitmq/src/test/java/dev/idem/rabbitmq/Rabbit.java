package dev.idem.rabbitmq;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import java.util.concurrent.TimeoutException;

/**
 * The RabbitMQ the tests run on: {@code idem.test.rabbitmq.uri}, by default the local broker with guest/guest. It must
 * be reachable: a test that cannot connect fails, it never skips.
 */
final class Rabbit {
  private Rabbit() {}

  static String uri() {
    return System.getProperty("idem.test.rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672");
  }

  static ConnectionFactory factory() {
    return configure(new ConnectionFactory());
  }

  static <F extends ConnectionFactory> F configure(F factory) {
    try {
      factory.setUri(uri());
    } catch (URISyntaxException | GeneralSecurityException e) {
      throw new IllegalArgumentException("idem.test.rabbitmq.uri is not an AMQP URI", e);
    }
    factory.setConnectionTimeout(5_000);
    return factory;
  }

  /** A connection for the test's own set-up and checks. */
  static Connection connect() {
    try {
      return factory().newConnection("idem-test");
    } catch (IOException | TimeoutException e) {
      throw new IllegalStateException("RabbitMQ is not reachable at " + uri().replaceFirst("//[^@/]*@", "//")
          + " (idem.test.rabbitmq.uri). Start it (bash .ci/run does) and run the tests again; tests that need a broker"
          + " never skip.", e);
    }
  }
}
