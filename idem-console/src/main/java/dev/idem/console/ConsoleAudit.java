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
    return a -> log.log(System.Logger.Level.INFO, "console: " + a.operator() + " " + a.action() + " " + a.target()
        + ": " + a.outcome() + (a.detail().isEmpty() ? "" : " (" + a.detail() + ")"));
  }
}
