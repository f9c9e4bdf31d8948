/**
 * What users need to test their own code with Idem: the store contract test kit
 * ({@link dev.idem.test.IdempotencyStoreContract}, {@link dev.idem.test.IdemExecutorContract}) that every store must
 * pass, and a {@link dev.idem.test.MutableClock}.
 */
package dev.idem.test;
