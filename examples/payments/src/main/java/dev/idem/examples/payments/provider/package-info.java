/**
 * The simulated payment provider: {@link dev.idem.examples.payments.provider.PaymentProvider} (the in-process API the
 * payment phases call), its HTTP API under {@code /provider}, and injected faults
 * ({@link dev.idem.examples.payments.provider.FaultInjection}). Its state lives in its own tables and its own
 * transactions, as an external system's would.
 */
package dev.idem.examples.payments.provider;
