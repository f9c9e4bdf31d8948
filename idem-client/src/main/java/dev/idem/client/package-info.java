/**
 * An HTTP client on {@code java.net.http} that makes unsafe requests safe to retry (DESIGN section 5): every unsafe
 * {@link dev.idem.client.Intent} carries one {@code Idempotency-Key} on all its attempts, retries follow the
 * classification of section 5 on top of idem-retry (backoff, {@code Retry-After}, deadline, budget), and a
 * {@link dev.idem.client.spi.PendingJournal} such as {@link dev.idem.client.FileJournal} keeps intents that have no
 * final answer yet, so that {@link dev.idem.client.IdempotentHttpClient#resumePending()} finishes them after a restart.
 *
 * <p>Entry point: {@link dev.idem.client.IdempotentHttpClient#builder()}, then
 * {@code client.send(Intent.post(uri, body))}.
 */
package dev.idem.client;
