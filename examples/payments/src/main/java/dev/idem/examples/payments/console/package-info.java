/**
 * The operator console at {@code /console/}: idem-console's servlet, mounted by the starter
 * ({@code idem.console.path=/console}), opened by the admin key through
 * {@link dev.idem.examples.payments.console.ConsoleConfiguration}'s authorizer.
 */
package dev.idem.examples.payments.console;
