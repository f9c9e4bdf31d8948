/**
 * Payments: {@code POST /payments} as the phased operation {@link dev.idem.examples.payments.payment.PaymentPhases}
 * (create, charge the provider, capture), and reads.
 */
package dev.idem.examples.payments.payment;
