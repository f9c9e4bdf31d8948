/**
 * Idem's HTTP contract for Jakarta Servlet 6: {@link dev.idem.servlet.IdempotencyFilter} (the entry point),
 * {@link dev.idem.servlet.IdempotentRoute}, {@link dev.idem.servlet.IdempotentExchange} (what a handler sees) and
 * {@link dev.idem.servlet.Problem} (RFC 9457 answers).
 */
package dev.idem.servlet;
