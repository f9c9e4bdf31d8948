package dev.idem.spring.console;

import dev.idem.console.ConsoleServlet;

/**
 * Adjusts the console before it is built: define beans of this type to set what the properties do not (a
 * {@code ConsoleAudit} the starter does not know of, a clock). Applied in {@code @Order}, after the starter's own
 * settings.
 */
@FunctionalInterface
public interface IdemConsoleCustomizer {

  /** Adjusts the builder. */
  void customize(ConsoleServlet.Builder builder);
}
