/**
 * The payments reference service: {@link dev.idem.examples.payments.PaymentsApplication} starts it,
 * {@link dev.idem.examples.payments.PaymentsConfiguration} wires it. Payments, refunds and the ledger get exactly-once
 * effects from Idem's phased mode over a simulated payment provider.
 */
package dev.idem.examples.payments;
