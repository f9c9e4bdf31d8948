/**
 * The HTTP contract kit: {@link dev.idem.test.http.HttpContractKit}, the rows every server running the idempotency
 * filter on an atomic JSON route must pass, over real HTTP with the JDK's client.
 */
package dev.idem.test.http;
