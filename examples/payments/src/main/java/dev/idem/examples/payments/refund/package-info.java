/**
 * Refunds: {@code POST /refunds} as the phased operation {@link dev.idem.examples.payments.refund.RefundPhases}
 * (reserve under a row lock, refund at the provider, complete), and reads.
 */
package dev.idem.examples.payments.refund;
