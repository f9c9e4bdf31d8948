package dev.idem.servlet.deadline;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** Embedded Jetty 12 on 127.0.0.1, port 0: the given filters in order, then one handler for every path. */
final class DeadlineServer implements AutoCloseable {
  /** The handler: what a servlet's service method would do. */
  @FunctionalInterface
  interface Handler {
    void handle(HttpServletRequest request, HttpServletResponse response) throws IOException;
  }

  private final Server server;
  private final int port;

  DeadlineServer(Handler handler, Filter... filters) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    for (Filter f : filters) {
      context.addFilter(new FilterHolder(f), "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    context.addServlet(new ServletHolder(new HttpServlet() {
      @Override
      protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        handler.handle(request, response);
      }
    }), "/*");
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
