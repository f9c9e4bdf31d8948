/**
 * Events exactly once: the transactional {@link dev.idem.outbox.Outbox} and its {@link dev.idem.outbox.OutboxRelay},
 * the {@link dev.idem.outbox.Inbox} of idempotent consumers, and (in {@code dev.idem.outbox.webhook}) Standard Webhooks
 * signing, verification and an HTTP transport.
 */
package dev.idem.outbox;
