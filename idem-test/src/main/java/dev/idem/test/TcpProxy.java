package dev.idem.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on 127.0.0.1 in front of a local server, for outages on demand: {@link #stop()} closes the listening port
 * and every connection through it (clients see their connection reset, then their connects refused), {@link #start()}
 * listens on the same port again. Point a client at {@link #port()} instead of the server's own port. Only for servers
 * that do not send clients elsewhere (a Kafka broker advertises its own address, so a Kafka client would bypass it).
 * The outage starts and ends when the test says, never after a time.
 *
 * <pre>{@code
 * try (TcpProxy proxy = new TcpProxy("127.0.0.1", 5672)) {
 *   factory.setPort(proxy.port());           // the client under test connects through the proxy
 *   proxy.stop();                            // its connection is lost, and new ones are refused
 *   // ... sends fail and are retried
 *   proxy.start();                           // the same port takes connections again
 * }
 * }</pre>
 */
public final class TcpProxy implements AutoCloseable {
  private final String targetHost;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile ServerSocket server;
  private volatile int port;

  /** A proxy to {@code targetHost:targetPort}, listening on a free port of 127.0.0.1. */
  public TcpProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    start();
  }

  /** The port the proxy listens on, the same across {@link #stop()} and {@link #start()}. */
  public int port() {
    return port;
  }

  /** Listens again, on the same port; does nothing when it listens already. */
  public synchronized void start() throws IOException {
    if (server != null) {
      return;
    }
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    port = s.getLocalPort();
    server = s;
    Thread acceptor = new Thread(() -> accept(s), "idem-tcp-proxy-" + port);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Closes the listening port and every connection through it; returns once they are closed. */
  public synchronized void stop() {
    ServerSocket s = server;
    server = null;
    closeQuietly(s);
    for (Socket socket : open) {
      closeQuietly(socket);
    }
    open.clear();
  }

  @Override
  public void close() {
    stop();
  }

  private void accept(ServerSocket s) {
    while (!s.isClosed()) {
      Socket client;
      try {
        client = s.accept();
      } catch (IOException e) {
        return; // stopped
      }
      Socket upstream = new Socket();
      try {
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(upstream);
        continue;
      }
      synchronized (this) {
        if (server != s) { // stopped meanwhile
          closeQuietly(client);
          closeQuietly(upstream);
          return;
        }
        open.add(client);
        open.add(upstream);
      }
      pump(client, upstream);
      pump(upstream, client);
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buffer)) >= 0) {
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // one side closed
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        open.remove(from);
        open.remove(to);
      }
    }, "idem-tcp-proxy-" + port + "-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception ignored) {
        // closing anyway
      }
    }
  }

  @Override
  public String toString() {
    return "TcpProxy{127.0.0.1:" + port + " -> " + targetHost + ':' + targetPort + (server == null ? ", stopped" : "")
        + '}';
  }
}
