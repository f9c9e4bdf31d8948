/**
 * A {@code java.net.http} client making unsafe requests safe to retry (docs/architecture.md#retry-rules): each unsafe
 * {@link dev.idem.client.Intent} carries one {@code Idempotency-Key} on all its attempts, retries follow the
 * classification of those rules on top of idem-retry (backoff, {@code Retry-After}, deadline, budget), and a
 * {@link dev.idem.client.spi.PendingJournal} such as {@link dev.idem.client.FileJournal} keeps intents that have no
 * final answer yet, so that {@link dev.idem.client.IdempotentHttpClient#resumePending()} finishes them after a restart.
 *
 * <p>Entry point: {@link dev.idem.client.IdempotentHttpClient#builder()}, then
 * {@code client.send(Intent.post(uri, body))}.
 */
package dev.idem.client;
