package dev.idem.console;

/**
 * Receives every action taken in the console ({@link ConsoleAction}), with the operator's name, whether it took
 * effect or was refused. Resolutions of uncertain records are also kept in the store's own audit
 * ({@code Idem.history}); evictions and outbox actions are kept only here. Called on the request's thread after the
 * action; an exception it throws is logged and does not undo the action. Implementations are thread-safe.
 *
 * <p>The default, {@link #logging()}, writes one line per action to the {@code dev.idem.console} system logger at
 * INFO. Plug in a table or an event stream where the audit must last.
 */
@FunctionalInterface
public interface ConsoleAudit {

  /** Keeps one action. */
  void record(ConsoleAction action);

  /** One INFO line per action on the {@code dev.idem.console} system logger. */
  static ConsoleAudit logging() {
    System.Logger log = System.getLogger("dev.idem.console");
    return a -> log.log(System.Logger.Level.INFO, "console: " + printable(a.operator()) + " " + a.action() + " "
        + printable(a.target()) + ": " + a.outcome() + (a.detail().isEmpty() ? "" : " (" + printable(a.detail())
        + ")"));
  }

  /** {@code text} with its control characters escaped, so that an operator's reason cannot start a line of its own. */
  private static String printable(String text) {
    if (text == null) {
      return "null";
    }
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        if (out == null) {
          out = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        out.append(String.format("\\u%04x", (int) c));
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? text : out.toString();
  }
}
