/**
 * Receiving Standard Webhooks exactly once in a servlet container: {@link dev.idem.webhook.WebhookReceiverServlet}
 * (the entry point) verifies the raw body's signature and timestamp with idem-outbox's
 * {@link dev.idem.outbox.webhook.WebhookReceiver}, then runs an {@link dev.idem.outbox.InboxHandler} through the
 * inbox, keyed by {@code webhook-id}, so that a redelivered webhook has one effect. Refusals are idem-servlet's
 * problem documents. This package used to be {@code dev.idem.servlet.webhook}, in idem-servlet.
 */
package dev.idem.webhook;
