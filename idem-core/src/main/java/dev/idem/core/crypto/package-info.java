/**
 * Encryption at rest: {@link dev.idem.core.crypto.Encryption} (envelope encryption with AES-256-GCM, data keys wrapped
 * by a {@link dev.idem.core.spi.KeyProvider}), {@link dev.idem.core.crypto.Keyring} (the local key provider), the
 * store decorator that seals stored responses ({@link dev.idem.core.crypto.EncryptedIdempotencyStore}) and the
 * re-encryption of records left under a retired key ({@link dev.idem.core.crypto.RecordReencryption}).
 */
package dev.idem.core.crypto;
