/**
 * What users implement: {@link dev.idem.core.spi.IdempotencyStore} (where records live; every implementation must
 * pass the contract test kit in {@code idem-test}) with its {@link dev.idem.core.spi.IdempotencyAdmin} (the
 * operator side: listing and eviction), {@link dev.idem.core.spi.IdemListener} (meters and logs) and
 * {@link dev.idem.core.spi.Sleeper}.
 */
package dev.idem.core.spi;
