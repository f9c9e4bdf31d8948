/**
 * Receiving Standard Webhooks exactly once in a servlet container:
 * {@link dev.idem.servlet.webhook.WebhookReceiverServlet} (the entry point) verifies the raw body's signature and
 * timestamp, then runs a {@link dev.idem.servlet.webhook.WebhookHandler} through the inbox, keyed by
 * {@code webhook-id}, so that a redelivered webhook has one effect. Needs {@code dev.idem:idem-outbox} on the
 * classpath.
 */
package dev.idem.servlet.webhook;
