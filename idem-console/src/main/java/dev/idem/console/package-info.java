/**
 * The operator console as a servlet: {@link dev.idem.console.ConsoleServlet}, with its SPIs: who may use it
 * ({@link dev.idem.console.ConsoleAuthorizer}), where its actions are kept ({@link dev.idem.console.ConsoleAudit}),
 * how it finds records by key ({@link dev.idem.console.RecordSearch}) and what its charts show
 * ({@link dev.idem.console.ConsoleMetrics}).
 */
package dev.idem.console;
