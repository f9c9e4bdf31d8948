package dev.idem.nats;

import dev.idem.outbox.OutboxTransport;
import dev.idem.test.TcpProxy;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;

/**
 * {@link NatsTransportContractTest} with the server connection as the outage: the transport publishes on a connection
 * of its own through a {@link TcpProxy}, and an outage stops the proxy, so that the connection is lost and cannot be
 * made again until it ends (the client keeps trying every 100 ms). That takes every destination of the test down at
 * once, so {@link #isolatesFailures()} is off. Streams are still managed and read on a direct connection.
 */
class NatsLostConnectionTransportContractTest extends NatsTransportContractTest {
  private TcpProxy proxy;
  private Connection proxied;

  @AfterEach
  void closeProxy() throws Exception {
    try {
      proxied.close();
    } finally {
      proxy.close();
    }
  }

  @Override
  protected boolean isolatesFailures() {
    return false;
  }

  @Override
  protected OutboxTransport createTransport() throws Exception {
    URI server = URI.create(NatsServer.url());
    proxy = new TcpProxy(server.getHost(), server.getPort() < 0 ? Options.DEFAULT_PORT : server.getPort());
    proxied = Nats.connect(Options.builder().server("nats://127.0.0.1:" + proxy.port())
        .connectionTimeout(Duration.ofSeconds(5)).maxReconnects(-1).reconnectWait(Duration.ofMillis(100))
        .connectionName("idem-kit-proxied").build());
    return NatsJetStreamTransport.builder(proxied).name("transport-kit").ackTimeout(Duration.ofSeconds(3)).build();
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
