/**
 * Idem's engine: keys, scopes, operations, records, policies and the executor. The entry point is
 * {@link dev.idem.core.Idem}: {@code Idem.builder().store(store).build().atomic(request, tx -> response)}.
 */
package dev.idem.core;
