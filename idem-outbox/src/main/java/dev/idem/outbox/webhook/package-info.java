/**
 * Standard Webhooks: {@link dev.idem.outbox.webhook.WebhookSigner} and {@link dev.idem.outbox.webhook.WebhookVerifier}
 * (HMAC-SHA256, {@code whsec_} secrets, several signatures for rotation, constant-time comparison), the outbox's
 * {@link dev.idem.outbox.webhook.WebhookTransport}, and a framework-free {@link dev.idem.outbox.webhook.WebhookReceiver}.
 */
package dev.idem.outbox.webhook;
