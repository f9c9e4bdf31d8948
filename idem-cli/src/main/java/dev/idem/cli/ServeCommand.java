package dev.idem.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** {@code idem serve}: runs the reference payments service until it is stopped. */
final class ServeCommand implements Command {

  @Override
  public String name() {
    return "serve";
  }

  @Override
  public String summary() {
    return "run the reference payments service (H2 under ./data by default)";
  }

  @Override
  public String usage() {
    return "usage: idem serve [--port N] [--db JDBC_URL] [-- SPRING_ARGS...]\n\n"
        + "Runs the reference payments service (examples/payments) on 127.0.0.1:N (default 8080) until Ctrl-C.\n"
        + "The database is an embedded H2 file under ./data unless --db or the IDEM_DB_URL environment variable\n"
        + "names another, for example jdbc:postgresql://127.0.0.1:5432/test?user=postgres or\n"
        + "jdbc:mariadb://127.0.0.1:3306/test?user=root. Arguments after -- go to Spring Boot unchanged\n"
        + "(for example --idem.completer.interval=1s). API: examples/payments/README.md.\n";
  }

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    int port = 8080;
    String db = System.getenv("IDEM_DB_URL");
    List<String> extra = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--")) {
        extra.addAll(args.subList(i + 1, args.size()));
        break;
      }
      if (a.equals("--help") || a.equals("-h")) {
        out.print(usage());
        return Main.OK;
      }
      if ((a.equals("--port") || a.equals("--db")) && i + 1 >= args.size()) {
        return usageError(err, a + " needs a value");
      }
      if (a.equals("--port")) {
        String v = args.get(++i);
        try {
          port = Integer.parseInt(v);
        } catch (NumberFormatException e) {
          port = -1;
        }
        if (port < 0 || port > 65535) {
          return usageError(err, "--port must be 0..65535, got '" + v + "'");
        }
      } else if (a.equals("--db")) {
        db = args.get(++i);
        if (!db.startsWith("jdbc:")) {
          return usageError(err, "--db must be a JDBC URL (jdbc:...), got '" + db + "'");
        }
      } else {
        return usageError(err, "unknown option '" + a + "'");
      }
    }
    try (PaymentsService service = PaymentsService.start(port, db, false, extra)) {
      out.println("idem serve: the payments service is listening on " + service.url("/") + " (Ctrl-C stops it)");
      out.flush();
      service.awaitStop();
      return Main.OK;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Main.OK;
    } catch (RuntimeException e) {
      err.println("idem serve: the service did not start: " + Main.redact(String.valueOf(e.getMessage())));
      return Main.FAILED;
    }
  }

  /** A bad command line: the problem, then the usage, as every command prints it. */
  private int usageError(PrintStream err, String problem) {
    err.println("idem " + name() + ": " + problem);
    err.print(usage());
    return Main.USAGE;
  }
}
