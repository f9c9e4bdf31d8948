package dev.idem.console;

import java.time.Instant;
import java.util.Objects;

/**
 * One action an operator took in the console, as {@link ConsoleAudit} receives it: who, what, on which target, and
 * how it ended. Read-only views are not actions.
 *
 * @param at when the console finished it
 * @param operator who, as the {@link ConsoleAuthorizer} named them
 * @param action one of {@code record.resolve}, {@code record.evict}, {@code outbox.replay}, {@code outbox.replay_all},
 *     {@code outbox.discard}
 * @param target what it was taken on: a record key ({@code scope / operation / key}), an event id or a filter
 * @param outcome {@code done}, or the problem code it was refused with
 * @param detail more about it (the resolution and its reason, how many events); may be empty, never null
 */
public record ConsoleAction(Instant at, String operator, String action, String target, String outcome,
    String detail) {

  /** Checks that no member is null. */
  public ConsoleAction {
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(operator, "operator");
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(detail, "detail");
  }

  /** Whether the action took effect. */
  public boolean done() {
    return outcome.equals("done");
  }
}
