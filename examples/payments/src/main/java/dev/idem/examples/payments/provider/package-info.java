/**
 * The simulated payment provider: {@link dev.idem.examples.payments.provider.PaymentProvider} (the in-process API),
 * its HTTP API under {@code /provider}, and injected faults
 * ({@link dev.idem.examples.payments.provider.FaultInjection}). Its state lives in its own tables and its own
 * transactions, as an external system's would. The payment phases call it through
 * {@link dev.idem.examples.payments.provider.ProviderClient}, which retries its outages (retry {@code provider}) and,
 * when configured, stops calling it while a circuit breaker is open. Its webhooks
 * ({@link dev.idem.examples.payments.provider.ProviderWebhooks}) are written to the outbox with each charge or
 * refund and sent by {@link dev.idem.examples.payments.provider.ProviderWebhookTransport}, some of them twice on
 * purpose.
 */
package dev.idem.examples.payments.provider;
