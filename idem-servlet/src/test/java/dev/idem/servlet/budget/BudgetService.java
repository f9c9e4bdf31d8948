package dev.idem.servlet.budget;

import dev.idem.servlet.Problem;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A small service in embedded Jetty 12: the retry budget filter (when given), then a filter that counts every
 * request that reached the work, then {@code /orders} (answers 200) and {@code /checkout}, whose handler calls a
 * dependency that always fails and answers 503 {@code DEPENDENCY.unavailable} with {@code "retryable": true}.
 */
final class BudgetService implements AutoCloseable {
  /** Requests that got past the budget to the work. */
  final AtomicInteger reachedWork = new AtomicInteger();
  /** Calls the dependency received, and those of them that were retries (attempt &gt; 1). */
  final AtomicInteger dependencyCalls = new AtomicInteger();
  final AtomicInteger dependencyRetryCalls = new AtomicInteger();

  private final Server server;
  private final int port;

  BudgetService(RetryBudgetFilter budget) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    if (budget != null) {
      context.addFilter(new FilterHolder(budget), "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    Filter work = (req, res, chain) -> {
      reachedWork.incrementAndGet();
      chain.doFilter(req, res);
    };
    context.addFilter(new FilterHolder(work), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new Orders()), "/orders/*");
    context.addServlet(new ServletHolder(new Checkout(budget == null
        ? RetryBudgetFilter.DEFAULT_ATTEMPT_HEADER : budget.attemptHeader())), "/checkout/*");
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  String url(String path) {
    return "http://127.0.0.1:" + port + path;
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }

  private static final class Orders extends HttpServlet {
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      req.getInputStream().readAllBytes();
      resp.setStatus(200);
      resp.setContentType("text/plain");
      resp.getOutputStream().write("ok".getBytes(StandardCharsets.UTF_8));
    }
  }

  private final class Checkout extends HttpServlet {
    private final String attemptHeader;

    Checkout(String attemptHeader) {
      this.attemptHeader = attemptHeader;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      req.getInputStream().readAllBytes(); // the request the handler would send on to the dependency
      dependencyCalls.incrementAndGet();
      if (RetryBudgetFilter.attempt(req.getHeader(attemptHeader)) > 1) {
        dependencyRetryCalls.incrementAndGet();
      }
      Problem.of(503, "DEPENDENCY.unavailable", "The card network is unavailable")
          .withDetail("the dependency failed; nothing was applied").withRetryable(true).write(resp);
    }
  }
}
