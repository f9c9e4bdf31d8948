package dev.idem.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code idem} command line: {@code idem <command> [options]}. Dispatches to one {@link Command} per subcommand;
 * to add one, implement {@link Command} and list it in {@link #COMMANDS}. Exit statuses: {@value #OK} success,
 * {@value #FAILED} the input was bad or the work failed, {@value #USAGE} the command line was wrong (unknown command
 * or option).
 */
public final class Main {
  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int USAGE = 2;

  private static final List<Command> COMMANDS = List.of(new DemoCommand(), new ServeCommand(),
      new EngineDemoCommand(), new FingerprintCommand(), new SimulateCommand(), new ChaosCommand(),
      new KeysCommand());

  private Main() {}

  public static void main(String[] args) {
    int status = run(args, System.in, System.out, System.err);
    System.out.flush();
    System.exit(status);
  }

  /**
   * The text (a URL, or a message holding URLs) with the credentials of JDBC URLs hidden, for everything a command
   * prints or writes: user info before the host and the value of a {@code password} parameter become {@code ***}.
   */
  static String redact(String text) {
    return text.replaceAll("(jdbc:[a-z0-9]+://)[^/@?\\s]*@", "$1***@")
        .replaceAll("(?i)([?&;]password=)[^&;\\s]*", "$1***");
  }

  /**
   * Runs {@code idem} with the given arguments and streams, returning the exit status instead of exiting, so that
   * tests can run it in-process.
   */
  public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
    Map<String, Command> commands = new LinkedHashMap<>();
    for (Command c : COMMANDS) {
      commands.put(c.name(), c);
    }
    if (args.length == 0) {
      err.print(usage(commands));
      return USAGE;
    }
    String name = args[0];
    if (name.equals("--help") || name.equals("-h") || name.equals("help")) {
      out.print(usage(commands));
      return OK;
    }
    Command command = commands.get(name);
    if (command == null) {
      err.println("idem: unknown command '" + name + "'");
      err.print(usage(commands));
      return USAGE;
    }
    return command.run(Arrays.asList(args).subList(1, args.length), in, out, err);
  }

  static String usage(Map<String, Command> commands) {
    StringBuilder sb = new StringBuilder("usage: idem <command> [options]\n\ncommands:\n");
    for (Command c : commands.values()) {
      sb.append(String.format("  %-13s %s%n", c.name(), c.summary()));
    }
    sb.append("\nRun 'idem <command> --help' for the options of a command.\n");
    return sb.toString();
  }
}
