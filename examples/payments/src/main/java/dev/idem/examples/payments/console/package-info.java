/**
 * The operator console at {@code /console}: a static page ({@link dev.idem.examples.payments.console.ConsoleAssets})
 * whose script calls the admin routes with the admin key, and the routes it needs that the rest of the admin API
 * lacks ({@link dev.idem.examples.payments.console.ConsoleController}, under {@code /admin/console}). Wired by
 * {@link dev.idem.examples.payments.console.ConsoleConfiguration}.
 */
package dev.idem.examples.payments.console;
