package dev.idem.rabbitmq;

import com.rabbitmq.client.ConnectionFactory;
import dev.idem.outbox.OutboxTransport;
import dev.idem.test.TcpProxy;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;

/**
 * {@link RabbitMqTransportContractTest} with the broker connection as the outage: the transport connects through a
 * {@link TcpProxy} of its own, and an outage stops the proxy, which resets the transport's connection and refuses new
 * ones until it ends. That takes every destination of the test down at once, so {@link #isolatesFailures()} is off.
 * The queues are still declared and read on a direct connection.
 */
class RabbitMqLostConnectionTransportContractTest extends RabbitMqTransportContractTest {
  private TcpProxy proxy;

  @AfterEach
  void closeProxy() {
    proxy.close();
  }

  @Override
  protected boolean isolatesFailures() {
    return false;
  }

  @Override
  protected OutboxTransport createTransport() throws Exception {
    URI broker = URI.create(Rabbit.uri());
    proxy = new TcpProxy(broker.getHost(), broker.getPort() < 0 ? ConnectionFactory.DEFAULT_AMQP_PORT
        : broker.getPort());
    ConnectionFactory factory = Rabbit.factory();
    factory.setHost("127.0.0.1");
    factory.setPort(proxy.port());
    return RabbitMqTransport.builder(factory).name("transport-kit").confirmTimeout(Duration.ofSeconds(5)).build();
  }

  @Override
  protected void startOutage(String destination) {
    proxy.stop();
  }

  @Override
  protected void endOutage(String destination) throws Exception {
    proxy.start();
  }
}
