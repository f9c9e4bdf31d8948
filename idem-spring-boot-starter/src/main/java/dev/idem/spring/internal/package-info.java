/**
 * The starter's machinery: annotation scanning, the Spring transaction join, background work, meters and the
 * threads their gauges read on, and the one reading of the {@code Idempotency-Attempt} header.
 */
package dev.idem.spring.internal;
