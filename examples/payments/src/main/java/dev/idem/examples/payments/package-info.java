/**
 * The payments reference service: {@link dev.idem.examples.payments.PaymentsApplication} starts it,
 * {@link dev.idem.examples.payments.PaymentsConfiguration} wires it. Payments, refunds and the ledger get exactly-once
 * effects from Idem's phased mode over a simulated payment provider; their events leave through the transactional
 * outbox as signed webhooks (and as Kafka records when {@code payments.kafka.*} is set), and the provider's webhooks
 * come in through the inbox
 * ({@link dev.idem.examples.payments.outbox.OutboxConfiguration}).
 */
package dev.idem.examples.payments;
