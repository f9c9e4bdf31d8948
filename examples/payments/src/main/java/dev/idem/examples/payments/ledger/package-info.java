/**
 * The double-entry ledger: {@link dev.idem.examples.payments.ledger.Ledger} books captured payments and refunds, and
 * {@link dev.idem.examples.payments.ledger.LedgerController} shows a tenant its entries and summary.
 */
package dev.idem.examples.payments.ledger;
