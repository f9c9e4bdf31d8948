package dev.idem.outbox.webhook;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.Encryption;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;

/**
 * A Standard Webhooks signing secret: {@code whsec_} followed by the base64 of 24 to 64 random bytes. Its
 * {@link #toString()} never shows the key.
 *
 * <p>To keep endpoint secrets encrypted at rest, store {@link #seal(Encryption, String)} instead of
 * {@link #reveal()} and read them back with {@link #fromStored(String, Encryption, String)}, which also reads the
 * plain {@code whsec_} text stored before encryption was turned on.
 */
public final class WebhookSecret {
  /** The prefix of a serialised secret. */
  public static final String PREFIX = "whsec_";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final byte[] key;

  private WebhookSecret(byte[] key) {
    if (key.length < 24 || key.length > 64) {
      throw new IllegalArgumentException("a webhook secret must be 24 to 64 bytes, got " + key.length);
    }
    this.key = key.clone();
  }

  /** A new random 32-byte secret. */
  public static WebhookSecret generate() {
    byte[] key = new byte[32];
    RANDOM.nextBytes(key);
    return new WebhookSecret(key);
  }

  /**
   * Parses {@code whsec_<base64>}. The prefix is required, so that a secret is never confused with another string.
   *
   * @throws IllegalArgumentException for anything else; the message does not repeat the input
   */
  public static WebhookSecret parse(String text) {
    Objects.requireNonNull(text, "secret");
    if (!text.startsWith(PREFIX) || text.length() > 200) {
      throw new IllegalArgumentException("a webhook secret is 'whsec_' followed by base64");
    }
    try {
      return new WebhookSecret(Base64.getDecoder().decode(text.substring(PREFIX.length())));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a webhook secret is 'whsec_' followed by base64 of 24 to 64 bytes");
    }
  }

  /** The secret as {@code whsec_<base64>}, to store or to show once to the endpoint's owner. */
  public String reveal() {
    return PREFIX + Base64.getEncoder().encodeToString(key);
  }

  /**
   * This secret sealed for storage: the text form of an envelope ({@link Encryption#TEXT_PREFIX} and base64) of the
   * key bytes, bound to {@code endpointId}, so that the sealed text moved to another endpoint does not open. 183
   * characters for a 32-byte secret under a local keyring's 2-character key id (ids of up to 14 characters fit a
   * 200-character column); longer with a KMS's wrapped keys.
   */
  public String seal(Encryption encryption, String endpointId) {
    Objects.requireNonNull(encryption, "encryption");
    // the key bytes, not their base64: the text form stays short enough for a 200-character column
    return Encryption.TEXT_PREFIX + Base64.getEncoder().encodeToString(
        encryption.seal(key, associatedData(endpointId)));
  }

  /**
   * Reads a secret as stored: sealed by {@link #seal} for the same {@code endpointId}, or the plain {@code whsec_}
   * text.
   *
   * @param encryption the key provider's encryption, or null when the application has none (a sealed secret then
   *     fails with {@link DecryptionException.Reason#UNKNOWN_KEY})
   * @throws DecryptionException when the stored secret is sealed and does not open: never retryable
   * @throws IllegalArgumentException when it is plain text but not a webhook secret
   */
  public static WebhookSecret fromStored(String stored, Encryption encryption, String endpointId) {
    Objects.requireNonNull(stored, "stored");
    if (!Encryption.isSealed(stored)) {
      return parse(stored);
    }
    if (encryption == null) {
      throw new DecryptionException(DecryptionException.Reason.UNKNOWN_KEY, null, "the secret of webhook endpoint '"
          + endpointId + "' is sealed and no encryption is configured to open it");
    }
    byte[] envelope;
    try {
      envelope = Base64.getDecoder().decode(stored.substring(Encryption.TEXT_PREFIX.length()));
    } catch (IllegalArgumentException e) {
      throw new DecryptionException(DecryptionException.Reason.MALFORMED, null, "the sealed secret of webhook"
          + " endpoint '" + endpointId + "' is not base64");
    }
    byte[] opened = encryption.open(envelope, associatedData(endpointId));
    try {
      return new WebhookSecret(opened);
    } catch (IllegalArgumentException e) {
      throw new DecryptionException(DecryptionException.Reason.MALFORMED, Encryption.keyIdOf(envelope),
          "the opened secret of webhook endpoint '" + endpointId + "' is not 24 to 64 bytes");
    } finally {
      Arrays.fill(opened, (byte) 0);
    }
  }

  private static byte[] associatedData(String endpointId) {
    return ("idem.webhook.secret.v1\n" + Objects.requireNonNull(endpointId, "endpointId")).getBytes(UTF_8);
  }

  byte[] key() {
    return key.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof WebhookSecret s && MessageDigest.isEqual(key, s.key);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(key);
  }

  @Override
  public String toString() {
    return "WebhookSecret{whsec_…}";
  }
}
