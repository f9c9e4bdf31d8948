package dev.idem.cli;

import dev.idem.examples.payments.PaymentsApplication;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** The reference payments service (examples/payments), started in this JVM. */
final class PaymentsService implements AutoCloseable {
  /** Spring Boot's console logging, on stderr. */
  static final String LOGGING_CONFIG = "classpath:dev/idem/cli/logback-stderr.xml";

  private final ConfigurableApplicationContext context;
  private final int port;

  private PaymentsService(ConfigurableApplicationContext context) {
    this.context = context;
    this.port = ((WebServerApplicationContext) context).getWebServer().getPort();
  }

  /**
   * Starts the service.
   *
   * @param port the port on 127.0.0.1, or 0 for a free one
   * @param databaseUrl a JDBC URL, or null for the service's default (an H2 file database under ./data)
   * @param quiet log warnings only, without the banner
   * @param extra Spring Boot arguments, after the ones above; logs go to stderr unless they set
   *     {@code --logging.config}
   */
  static PaymentsService start(int port, String databaseUrl, boolean quiet, List<String> extra) {
    List<String> args = new ArrayList<>();
    args.add("--server.port=" + port);
    args.add("--server.address=127.0.0.1");
    if (databaseUrl != null) {
      args.add("--spring.datasource.url=" + databaseUrl);
    }
    // stdout is the command's: the service's logs, and its banner, go to stderr (unless the user names a config)
    if (extra.stream().noneMatch(a -> a.startsWith("--logging.config="))) {
      args.add("--logging.config=" + LOGGING_CONFIG);
    }
    if (quiet) {
      args.add("--spring.main.banner-mode=off");
      args.add("--logging.level.root=WARN");
    } else if (extra.stream().noneMatch(a -> a.startsWith("--spring.main.banner-mode="))) {
      args.add("--spring.main.banner-mode=log");
    }
    args.addAll(extra);
    return new PaymentsService(new SpringApplicationBuilder(PaymentsApplication.class).run(args.toArray(String[]::new)));
  }

  int port() {
    return port;
  }

  String url(String path) {
    return "http://127.0.0.1:" + port + path;
  }

  /** Blocks until the service stops (Ctrl-C). */
  void awaitStop() throws InterruptedException {
    Object lock = new Object();
    context.addApplicationListener(event -> {
      if (event instanceof org.springframework.context.event.ContextClosedEvent) {
        synchronized (lock) {
          lock.notifyAll();
        }
      }
    });
    synchronized (lock) {
      while (context.isActive()) {
        lock.wait(1000);
      }
    }
  }

  @Override
  public void close() {
    context.close();
  }
}
