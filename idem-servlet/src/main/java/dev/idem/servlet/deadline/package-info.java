/**
 * Deadline propagation on the server: the client's remaining time (the {@code Request-Timeout} header) becomes a
 * {@link dev.idem.core.Deadline} for the handler and for the calls it makes through idem-client, and a request that
 * arrives with no time left is refused before any work. The entry point is
 * {@link dev.idem.servlet.deadline.DeadlineFilter}.
 */
package dev.idem.servlet.deadline;
