/** Operator routes under {@code /admin}: provider faults and statistics, idempotency records. */
package dev.idem.examples.payments.admin;
