/**
 * The operator console ({@code dev.idem:idem-console}) in Spring Boot servlet applications:
 * {@link dev.idem.spring.console.IdemConsoleAutoConfiguration} mounts it at {@code idem.console.path}, with the
 * application's {@code ConsoleAuthorizer} bean (without one it refuses everyone).
 */
package dev.idem.spring.console;
