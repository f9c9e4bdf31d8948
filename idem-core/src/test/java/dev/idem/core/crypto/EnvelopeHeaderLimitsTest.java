package dev.idem.core.crypto;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.spi.KeyProvider;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Regression: the envelope header keeps the key id's length in one byte and the wrapped key's in two. A key provider
 * whose key id or wrapped key is longer must be refused when sealing, not written as an envelope nobody can open.
 */
class EnvelopeHeaderLimitsTest {

  /** A provider that "wraps" by copying, padded to {@code wrappedLength}, under a key id of its choosing. */
  static KeyProvider provider(String keyId, int wrappedLength) {
    return new KeyProvider() {
      @Override
      public String currentKeyId() {
        return keyId;
      }

      @Override
      public WrappedKey wrap(byte[] dataKey) {
        return new WrappedKey(keyId, Arrays.copyOf(dataKey, Math.max(dataKey.length, wrappedLength)));
      }

      @Override
      public byte[] unwrap(String id, byte[] wrappedKey) {
        return Arrays.copyOf(wrappedKey, 32);
      }
    };
  }

  @Test
  void theLongestKeyIdAndWrappedKeyAnEnvelopeHoldsStillOpen() {
    Encryption encryption = Encryption.with(provider("k".repeat(255), 0xffff));

    byte[] sealed = encryption.seal("data".getBytes(UTF_8), new byte[0]);

    assertThat(new String(encryption.open(sealed, new byte[0]), UTF_8)).isEqualTo("data");
    assertThat(Encryption.keyIdOf(sealed)).hasSize(255);
  }

  @Test
  void aLongerKeyIdOrWrappedKeyIsRefusedWhenSealing() {
    Encryption longId = Encryption.with(provider("k".repeat(256), 32));
    Encryption longWrap = Encryption.with(provider("k1", 0x10000));

    assertThatThrownBy(() -> longId.seal(new byte[1], new byte[0])).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("key id of 256 bytes");
    assertThatThrownBy(() -> longWrap.seal(new byte[1], new byte[0])).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("65536 bytes");
  }
}
