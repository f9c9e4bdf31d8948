/**
 * In-memory stores of the message side, for tests and examples: {@link InMemoryOutboxStore} and
 * {@link InMemoryInboxStore}. They keep nothing across restarts. Their transactions buffer writes until commit and
 * may span both stores: an inbox handler that enqueues an outbox event in the transaction it was handed commits both
 * or neither.
 */
package dev.idem.outbox.memory;
