/**
 * What a framework or an application plugs into the filter: {@link dev.idem.servlet.spi.ScopeResolver} (who owns a
 * key), {@link dev.idem.servlet.spi.RouteResolver} (which requests are idempotent) and
 * {@link dev.idem.servlet.spi.TransactionBoundary} (which transaction the record joins).
 */
package dev.idem.servlet.spi;
