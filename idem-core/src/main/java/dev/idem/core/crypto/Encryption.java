package dev.idem.core.crypto;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.idem.core.ConfigurationException;
import dev.idem.core.crypto.DecryptionException.Reason;
import dev.idem.core.spi.KeyProvider;
import dev.idem.core.spi.KeyProvider.WrappedKey;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Envelope encryption with AES-256-GCM from the JDK: data is sealed under a random data key, and the data key is
 * wrapped by a {@link KeyProvider} and travels with the data. Each seal draws a fresh 96-bit nonce. A data key serves
 * a batch of seals (by default up to 100,000 seals or 10 minutes, whichever ends first; {@code dataKeyUses(1)} gives a
 * fresh data key per record) and is then replaced; unwrapped data keys are cached (by default 1,024) so that opening
 * costs one provider call per data key. Thread-safe; build one per key provider and share it.
 *
 * <p>Every seal binds <em>associated data</em> that the caller gives: the place the data belongs to (a record's
 * scope, operation and key, say). Opening with other associated data fails with {@link DecryptionException}
 * ({@link Reason#TAMPERED}), so sealed data moved to another place does not open. The key id and the wrapped data key
 * are authenticated too.
 *
 * <p>The envelope is binary ({@link #seal}) or text ({@link #sealText}, the binary form in base64 behind the prefix
 * {@value #TEXT_PREFIX}) for text columns. {@link #isSealed} tells an envelope from plaintext written before
 * encryption was turned on, and {@link #keyIdOf} reads the key id without opening (rotation uses it).
 */
public final class Encryption {
  /** The prefix of the text form of an envelope. */
  public static final String TEXT_PREFIX = "idem:enc:1:";

  private static final byte[] MAGIC = {0x00, 'i', 'e', 0x01};
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final int KEY_BYTES = 32;
  private static final SecureRandom RANDOM = new SecureRandom();
  /** A cipher per thread: looking one up allocates more than a seal; every use re-initialises it. */
  private static final ThreadLocal<Cipher> CIPHERS = ThreadLocal.withInitial(() -> {
    try {
      return Cipher.getInstance("AES/GCM/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available in this JDK", e);
    }
  });

  private final KeyProvider provider;
  private final long dataKeyUses;
  private final Duration dataKeyLifetime;
  private final Clock clock;
  private final Map<CacheKey, SecretKey> opened;
  private final int cacheSize;
  private DataKey current;

  private Encryption(Builder b) {
    this.provider = b.provider;
    this.dataKeyUses = b.dataKeyUses;
    this.dataKeyLifetime = b.dataKeyLifetime;
    this.clock = b.clock;
    this.cacheSize = b.cacheSize;
    this.opened = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<CacheKey, SecretKey> eldest) {
        return size() > cacheSize;
      }
    };
  }

  /** Encryption with the defaults, under the given keys. */
  public static Encryption with(KeyProvider provider) {
    return builder(provider).build();
  }

  public static Builder builder(KeyProvider provider) {
    return new Builder(provider);
  }

  /** The key provider's current key id: what {@link #seal} uses now. */
  public String currentKeyId() {
    return provider.currentKeyId();
  }

  /** Seals {@code plaintext}, binding {@code associatedData}. */
  public byte[] seal(byte[] plaintext, byte[] associatedData) {
    Objects.requireNonNull(plaintext, "plaintext");
    Objects.requireNonNull(associatedData, "associatedData");
    DataKey key = dataKey();
    byte[] keyId = key.wrapped.keyId().getBytes(UTF_8);
    byte[] wrapped = key.wrapped.bytes();
    if (keyId.length < 1 || keyId.length > 255 || wrapped.length > 0xffff) {
      // the header holds them in one and two bytes: a longer one would be written, and never read back
      throw new IllegalStateException("key provider " + provider + " gave a key id of " + keyId.length
          + " bytes and a wrapped data key of " + wrapped.length + " bytes; an envelope holds 1 to 255 and at most"
          + " 65535");
    }
    int header = MAGIC.length + 1 + keyId.length + 2 + wrapped.length + NONCE_BYTES;
    byte[] out = new byte[header + plaintext.length + TAG_BITS / 8];
    ByteBuffer buffer = ByteBuffer.wrap(out);
    buffer.put(MAGIC).put((byte) keyId.length).put(keyId).putShort((short) wrapped.length).put(wrapped);
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    buffer.put(nonce);
    try {
      Cipher cipher = CIPHERS.get();
      cipher.init(Cipher.ENCRYPT_MODE, key.key, new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(out, 0, header);
      cipher.updateAAD(associatedData);
      cipher.doFinal(plaintext, 0, plaintext.length, out, header);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to seal", e);
    }
  }

  /**
   * Opens an envelope sealed with the same {@code associatedData}.
   *
   * @throws DecryptionException when it does not authenticate, its key id is unknown, or it is not an envelope
   */
  public byte[] open(byte[] envelope, byte[] associatedData) {
    Objects.requireNonNull(envelope, "envelope");
    Objects.requireNonNull(associatedData, "associatedData");
    Header h = header(envelope);
    SecretKey key = unwrap(h.keyId, h.wrapped);
    try {
      Cipher cipher = CIPHERS.get();
      cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, envelope, h.length - NONCE_BYTES,
          NONCE_BYTES));
      cipher.updateAAD(envelope, 0, h.length);
      cipher.updateAAD(associatedData);
      return cipher.doFinal(envelope, h.length, envelope.length - h.length);
    } catch (AEADBadTagException e) {
      throw new DecryptionException(Reason.TAMPERED, h.keyId,
          "sealed data (key '" + h.keyId + "') does not authenticate: tampered with, or moved from another place", e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to open", e);
    }
  }

  /** Seals text into the text form of an envelope ({@value #TEXT_PREFIX} and base64). */
  public String sealText(String plaintext, String associatedData) {
    return TEXT_PREFIX + Base64.getEncoder().encodeToString(
        seal(plaintext.getBytes(UTF_8), associatedData.getBytes(UTF_8)));
  }

  /** Opens the text form of an envelope; see {@link #open}. */
  public String openText(String envelope, String associatedData) {
    if (!isSealed(envelope)) {
      throw new DecryptionException(Reason.MALFORMED, null, "the text is not a sealed envelope");
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(envelope.substring(TEXT_PREFIX.length()));
    } catch (IllegalArgumentException e) {
      throw new DecryptionException(Reason.MALFORMED, null, "the sealed text is not base64", e);
    }
    return new String(open(bytes, associatedData.getBytes(UTF_8)), UTF_8);
  }

  /** Whether the bytes are an envelope (as opposed to plaintext written before encryption was on). */
  public static boolean isSealed(byte[] data) {
    return data != null && data.length > MAGIC.length && Arrays.equals(data, 0, MAGIC.length, MAGIC, 0, MAGIC.length);
  }

  /** Whether the text is the text form of an envelope. */
  public static boolean isSealed(String text) {
    return text != null && text.startsWith(TEXT_PREFIX);
  }

  /** The key id an envelope was sealed under, read without opening it. */
  public static String keyIdOf(byte[] envelope) {
    return header(envelope).keyId;
  }

  /** The key id the text form of an envelope was sealed under. */
  public static String keyIdOf(String envelope) {
    if (!isSealed(envelope)) {
      throw new DecryptionException(Reason.MALFORMED, null, "the text is not a sealed envelope");
    }
    try {
      return keyIdOf(Base64.getDecoder().decode(envelope.substring(TEXT_PREFIX.length())));
    } catch (IllegalArgumentException e) {
      throw new DecryptionException(Reason.MALFORMED, null, "the sealed text is not base64", e);
    }
  }

  @Override
  public String toString() {
    return "Encryption[AES-256-GCM, keys " + provider + "]";
  }

  private synchronized DataKey dataKey() {
    Instant now = clock.instant();
    DataKey key = current;
    if (key == null || key.uses >= dataKeyUses || !now.isBefore(key.created.plus(dataKeyLifetime))
        || !key.wrapped.keyId().equals(provider.currentKeyId())) {
      byte[] raw = new byte[KEY_BYTES];
      RANDOM.nextBytes(raw);
      WrappedKey wrapped = provider.wrap(raw);
      key = new DataKey(new SecretKeySpec(raw, "AES"), wrapped, now);
      Arrays.fill(raw, (byte) 0);
      current = key;
    }
    key.uses++;
    return key;
  }

  private SecretKey unwrap(String keyId, byte[] wrapped) {
    // the wrapped bytes hold the provider's own nonce: they name one data key (the key id is checked by unwrap)
    CacheKey id = new CacheKey(keyId, ByteBuffer.wrap(wrapped));
    synchronized (opened) {
      SecretKey cached = opened.get(id);
      if (cached != null) {
        return cached;
      }
    }
    byte[] raw = provider.unwrap(keyId, wrapped);
    if (raw.length != KEY_BYTES) {
      throw new DecryptionException(Reason.MALFORMED, keyId, "the unwrapped data key is " + raw.length + " bytes");
    }
    SecretKey key = new SecretKeySpec(raw, "AES");
    Arrays.fill(raw, (byte) 0);
    synchronized (opened) {
      opened.put(id, key);
    }
    return key;
  }

  private static Header header(byte[] envelope) {
    if (!isSealed(envelope)) {
      throw new DecryptionException(Reason.MALFORMED, null, "the data is not a sealed envelope");
    }
    try {
      ByteBuffer buffer = ByteBuffer.wrap(envelope);
      buffer.position(MAGIC.length);
      byte[] keyId = new byte[buffer.get() & 0xff];
      buffer.get(keyId);
      byte[] wrapped = new byte[buffer.getShort() & 0xffff];
      buffer.get(wrapped);
      int length = buffer.position() + NONCE_BYTES;
      if (keyId.length == 0 || length + TAG_BITS / 8 > envelope.length) {
        throw new DecryptionException(Reason.MALFORMED, null, "the envelope is truncated");
      }
      return new Header(new String(keyId, UTF_8), wrapped, length);
    } catch (RuntimeException e) {
      if (e instanceof DecryptionException) {
        throw e;
      }
      throw new DecryptionException(Reason.MALFORMED, null, "the envelope is truncated", e);
    }
  }

  private static final class DataKey {
    final SecretKey key;
    final WrappedKey wrapped;
    final Instant created;
    long uses;

    DataKey(SecretKey key, WrappedKey wrapped, Instant created) {
      this.key = key;
      this.wrapped = wrapped;
      this.created = created;
    }
  }

  private record Header(String keyId, byte[] wrapped, int length) {}

  private record CacheKey(String keyId, ByteBuffer wrapped) {}

  /** Mutable, not thread-safe. */
  public static final class Builder {
    private final KeyProvider provider;
    private long dataKeyUses = 100_000;
    private Duration dataKeyLifetime = Duration.ofMinutes(10);
    private int cacheSize = 1024;
    private Clock clock = Clock.systemUTC();

    private Builder(KeyProvider provider) {
      this.provider = Objects.requireNonNull(provider, "provider");
    }

    /** Seals per data key before a fresh one is drawn: 1 (a data key per record) to 4,294,967,296 (default 100,000). */
    public Builder dataKeyUses(long uses) {
      if (uses < 1 || uses > (1L << 32)) {
        throw new ConfigurationException("dataKeyUses must be 1..2^32 (random GCM nonces), got " + uses);
      }
      this.dataKeyUses = uses;
      return this;
    }

    /** How long a data key serves before a fresh one is drawn (default 10 minutes; at least 1 ms). */
    public Builder dataKeyLifetime(Duration lifetime) {
      Objects.requireNonNull(lifetime, "lifetime");
      if (lifetime.toMillis() < 1) {
        throw new ConfigurationException("dataKeyLifetime must be at least 1 ms, got " + lifetime);
      }
      this.dataKeyLifetime = lifetime;
      return this;
    }

    /** Unwrapped data keys kept in memory (default 1,024; 1..1,000,000). */
    public Builder cacheSize(int size) {
      if (size < 1 || size > 1_000_000) {
        throw new ConfigurationException("cacheSize must be 1..1000000, got " + size);
      }
      this.cacheSize = size;
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Encryption build() {
      return new Encryption(this);
    }
  }
}
