package dev.idem.core.crypto;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.ConfigurationException;
import dev.idem.core.crypto.DecryptionException.Reason;
import dev.idem.core.spi.KeyProvider;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EncryptionTest {
  private static final byte[] PLAIN = "{\"card\":\"4242424242424242\"}".getBytes(UTF_8);
  private static final byte[] HERE = "record a".getBytes(UTF_8);

  @Test
  void sealsAndOpensWithTheSameAssociatedData() {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));

    byte[] sealed = encryption.seal(PLAIN, HERE);

    assertThat(Encryption.isSealed(sealed)).isTrue();
    assertThat(Encryption.keyIdOf(sealed)).isEqualTo("k1");
    assertThat(new String(sealed, UTF_8)).doesNotContain("4242");
    assertThat(encryption.open(sealed, HERE)).isEqualTo(PLAIN);
  }

  @Test
  void twoSealsOfTheSameDataDiffer() {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));

    assertThat(encryption.seal(PLAIN, HERE)).isNotEqualTo(encryption.seal(PLAIN, HERE));
  }

  @Test
  void otherAssociatedDataDoesNotOpen() {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));
    byte[] sealed = encryption.seal(PLAIN, HERE);

    assertThatThrownBy(() -> encryption.open(sealed, "record b".getBytes(UTF_8)))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.TAMPERED));
  }

  @Test
  void everyFlippedBitIsRefusedAndNeverOpensToOtherBytes() {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));
    byte[] sealed = encryption.seal(PLAIN, HERE);

    for (int i = 0; i < sealed.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] flipped = sealed.clone();
        flipped[i] ^= (byte) (1 << bit);
        assertThatThrownBy(() -> encryption.open(flipped, HERE)).as("byte %d bit %d", i, bit)
            .isInstanceOf(DecryptionException.class);
      }
    }
  }

  @Test
  void truncatedEnvelopesAreMalformedOrTampered() {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));
    byte[] sealed = encryption.seal(PLAIN, HERE);

    for (int n = 0; n < sealed.length; n++) {
      byte[] cut = Arrays.copyOf(sealed, n);
      assertThatThrownBy(() -> encryption.open(cut, HERE)).as("%d bytes", n)
          .isInstanceOfSatisfying(DecryptionException.class,
              e -> assertThat(e.reason()).isIn(Reason.MALFORMED, Reason.TAMPERED));
    }
  }

  @Test
  void aKeyringWithoutTheSealingKeyRefusesAsUnknownKey() {
    byte[] sealed = Encryption.with(Keyring.generate("k1")).seal(PLAIN, HERE);
    Encryption other = Encryption.with(Keyring.generate("k2"));

    assertThatThrownBy(() -> other.open(sealed, HERE)).isInstanceOfSatisfying(DecryptionException.class, e -> {
      assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY);
      assertThat(e.keyId()).isEqualTo("k1");
    });
  }

  @Test
  void aKeyOfTheSameIdButOtherBytesRefusesAsTampered() {
    byte[] sealed = Encryption.with(Keyring.generate("k1")).seal(PLAIN, HERE);
    Encryption impostor = Encryption.with(Keyring.generate("k1"));

    assertThatThrownBy(() -> impostor.open(sealed, HERE))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.TAMPERED));
  }

  @Test
  void afterANewKeyNewDataUsesItAndOldDataStillOpens() {
    Keyring k1 = Keyring.generate("k1");
    byte[] old = Encryption.with(k1).seal(PLAIN, HERE);
    Encryption rotated = Encryption.with(k1.withNewKey("k2"));

    byte[] fresh = rotated.seal(PLAIN, HERE);

    assertThat(Encryption.keyIdOf(fresh)).isEqualTo("k2");
    assertThat(rotated.open(old, HERE)).isEqualTo(PLAIN);
    assertThat(rotated.open(fresh, HERE)).isEqualTo(PLAIN);
  }

  @Test
  void aDataKeyServesABatchThenAFreshOneIsDrawnAndUnwrapsAreCached() {
    CountingProvider provider = new CountingProvider(Keyring.generate("k1"));
    Encryption encryption = Encryption.builder(provider).dataKeyUses(10).build();
    Set<String> wrappedKeys = new HashSet<>();
    byte[][] sealed = new byte[25][];

    for (int i = 0; i < sealed.length; i++) {
      sealed[i] = encryption.seal(PLAIN, HERE);
      wrappedKeys.add(Arrays.toString(Arrays.copyOfRange(sealed[i], 0, 69)));
    }
    for (int round = 0; round < 3; round++) {
      for (byte[] s : sealed) {
        assertThat(encryption.open(s, HERE)).isEqualTo(PLAIN);
      }
    }

    assertThat(provider.wraps).hasValue(3);
    assertThat(wrappedKeys).hasSize(3);
    assertThat(provider.unwraps).hasValue(3);
  }

  @Test
  void aDataKeyIsReplacedWhenItsLifetimeEnds() {
    CountingProvider provider = new CountingProvider(Keyring.generate("k1"));
    Instant[] now = {Instant.parse("2026-01-01T00:00:00Z")};
    Clock clock = new Clock() {
      @Override
      public ZoneOffset getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return now[0];
      }
    };
    Encryption encryption = Encryption.builder(provider).dataKeyLifetime(Duration.ofMinutes(1)).clock(clock).build();

    encryption.seal(PLAIN, HERE);
    encryption.seal(PLAIN, HERE);
    now[0] = now[0].plusSeconds(61);
    encryption.seal(PLAIN, HERE);

    assertThat(provider.wraps).hasValue(2);
  }

  @Test
  void theTextFormRoundTripsAndIsRecognised() {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));

    String sealed = encryption.sealText("whsec_secret", "endpoint 7");

    assertThat(sealed).startsWith(Encryption.TEXT_PREFIX).doesNotContain("whsec");
    assertThat(Encryption.isSealed(sealed)).isTrue();
    assertThat(Encryption.isSealed("whsec_secret")).isFalse();
    assertThat(Encryption.keyIdOf(sealed)).isEqualTo("k1");
    assertThat(encryption.openText(sealed, "endpoint 7")).isEqualTo("whsec_secret");
    assertThatThrownBy(() -> encryption.openText(sealed, "endpoint 8")).isInstanceOf(DecryptionException.class);
    assertThatThrownBy(() -> encryption.openText(Encryption.TEXT_PREFIX + "!!", "endpoint 7"))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED));
  }

  @Test
  void plaintextIsNotAnEnvelope() {
    assertThat(Encryption.isSealed("{}".getBytes(UTF_8))).isFalse();
    assertThat(Encryption.isSealed(new byte[0])).isFalse();
    assertThatThrownBy(() -> Encryption.keyIdOf("{}".getBytes(UTF_8)))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED));
  }

  @Test
  void settingsAreCheckedUpFront() {
    Keyring keys = Keyring.generate("k1");
    assertThatThrownBy(() -> Encryption.builder(keys).dataKeyUses(0)).isInstanceOf(ConfigurationException.class);
    assertThatThrownBy(() -> Encryption.builder(keys).dataKeyUses((1L << 32) + 1))
        .isInstanceOf(ConfigurationException.class);
    assertThatThrownBy(() -> Encryption.builder(keys).dataKeyLifetime(Duration.ZERO))
        .isInstanceOf(ConfigurationException.class);
    assertThatThrownBy(() -> Encryption.builder(keys).cacheSize(0)).isInstanceOf(ConfigurationException.class);
  }

  private static final class CountingProvider implements KeyProvider {
    final KeyProvider delegate;
    final AtomicInteger wraps = new AtomicInteger();
    final AtomicInteger unwraps = new AtomicInteger();

    CountingProvider(KeyProvider delegate) {
      this.delegate = delegate;
    }

    @Override
    public String currentKeyId() {
      return delegate.currentKeyId();
    }

    @Override
    public WrappedKey wrap(byte[] dataKey) {
      wraps.incrementAndGet();
      return delegate.wrap(dataKey);
    }

    @Override
    public byte[] unwrap(String keyId, byte[] wrappedKey) {
      unwraps.incrementAndGet();
      return delegate.unwrap(keyId, wrappedKey);
    }
  }
}
