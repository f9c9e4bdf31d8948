package dev.idem.outbox.webhook;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;

/**
 * A Standard Webhooks signing secret: {@code whsec_} followed by the base64 of 24 to 64 random bytes. Its
 * {@link #toString()} never shows the key.
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
