/**
 * The provider's webhooks, consumed exactly once: {@link dev.idem.examples.payments.inbox.ProviderWebhookController}
 * verifies each one's signature and runs its effect through the inbox
 * ({@link dev.idem.examples.payments.inbox.ProviderConfirmations}), so a webhook the provider sends twice is applied
 * once.
 */
package dev.idem.examples.payments.inbox;
