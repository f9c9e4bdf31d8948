/**
 * Webhooks to tenants: endpoints per tenant ({@link dev.idem.examples.payments.webhook.WebhookEndpointController},
 * stored by {@link dev.idem.examples.payments.webhook.JdbcWebhookEndpoints}), and the events that payments and refunds
 * write to the outbox in their own transaction ({@link dev.idem.examples.payments.webhook.WebhookEvents}), in the
 * {@link dev.idem.examples.payments.webhook.EventEnvelope} that Kafka's records carry too.
 */
package dev.idem.examples.payments.webhook;
