package dev.idem.core.spi;

import dev.idem.core.crypto.DecryptionException;
import java.util.Objects;

/**
 * Wraps and unwraps the data keys that {@link dev.idem.core.crypto.Encryption} seals data with (envelope encryption):
 * the key-encryption keys never leave the provider. {@link dev.idem.core.crypto.Keyring} is the local implementation
 * (keys from a file or the environment); a KMS plugs in by implementing these three methods with its own encrypt and
 * decrypt calls. {@code Encryption} keeps unwrapped data keys in a bounded cache, so {@link #unwrap} runs once per
 * data key, not once per record.
 *
 * <p>Implementations are thread-safe. A permanent refusal ({@code keyId} unknown, a wrapped key that does not
 * authenticate) is a {@link DecryptionException}; a provider that cannot be reached right now throws any other
 * runtime exception, which callers treat as transient.
 */
public interface KeyProvider {

  /** The id of the key that {@link #wrap} uses now: new data is sealed under it. */
  String currentKeyId();

  /** Wraps a fresh 32-byte data key under the current key. The result names the key id it used. */
  WrappedKey wrap(byte[] dataKey);

  /**
   * Unwraps a data key that {@link #wrap} produced under {@code keyId}.
   *
   * @throws DecryptionException when the key id is unknown (retired and removed, or never here) or the wrapped key
   *     does not authenticate
   */
  byte[] unwrap(String keyId, byte[] wrappedKey);

  /** A data key wrapped under a key-encryption key. The bytes are opaque to everyone but the provider. */
  record WrappedKey(String keyId, byte[] bytes) {
    public WrappedKey {
      Objects.requireNonNull(keyId, "keyId");
      bytes = bytes.clone();
    }

    @Override
    public byte[] bytes() {
      return bytes.clone();
    }
  }
}
