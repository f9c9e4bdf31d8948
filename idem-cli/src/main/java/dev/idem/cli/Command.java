package dev.idem.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.List;

/** One subcommand of {@code idem}. Implementations are stateless between runs. */
interface Command {
  /** The word that selects this command: {@code idem <name> ...}. */
  String name();

  /** One line for the list of commands. */
  String summary();

  /** The command's usage text: synopsis, options, exit statuses. */
  String usage();

  /**
   * Runs the command.
   *
   * @param args the arguments after the command name
   * @return the exit status: {@link Main#OK}, {@link Main#FAILED} or {@link Main#USAGE}
   */
  int run(List<String> args, InputStream in, PrintStream out, PrintStream err);
}
