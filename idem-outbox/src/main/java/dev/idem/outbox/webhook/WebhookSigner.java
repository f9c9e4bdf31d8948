package dev.idem.outbox.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs webhooks per Standard Webhooks: {@code v1,<base64 HMAC-SHA256(secret, id + "." + timestamp + "." + body)>},
 * one signature per secret, space-separated, so that a receiver holding either the old or the new secret accepts the
 * message during a rotation. Thread-safe.
 */
public final class WebhookSigner {
  private final List<Mac> prototypes;

  private WebhookSigner(List<WebhookSecret> secrets) {
    if (secrets.isEmpty()) {
      throw new IllegalArgumentException("at least one secret is required");
    }
    this.prototypes = secrets.stream().map(WebhookSigner::mac).toList();
  }

  /** A signer with these secrets, newest first. */
  public static WebhookSigner of(List<WebhookSecret> secrets) {
    return new WebhookSigner(List.copyOf(secrets));
  }

  public static WebhookSigner of(WebhookSecret... secrets) {
    return new WebhookSigner(List.of(secrets));
  }

  /**
   * The {@code webhook-signature} header value for a message. The signed timestamp is
   * {@code Long.toString(timestampSeconds)}, which is what the {@code webhook-timestamp} header must carry: the
   * verifier checks the signature over that header's bytes exactly as received.
   */
  public String sign(String id, long timestampSeconds, byte[] body) {
    String timestamp = Long.toString(timestampSeconds);
    return prototypes.stream()
        .map(p -> "v1," + Base64.getEncoder().encodeToString(digest(p, id, timestamp, body)))
        .collect(Collectors.joining(" "));
  }

  /**
   * HMAC-SHA256 of {@code id + "." + timestamp + "." + body}, the timestamp as the bytes of the header (ASCII digits,
   * which the verifier has checked), never re-formatted, so that one signature covers one byte string only.
   */
  static byte[] digest(Mac prototype, String id, String timestamp, byte[] body) {
    Mac mac;
    try {
      mac = (Mac) prototype.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException("the HmacSHA256 provider " + prototype.getProvider() + " cannot clone a Mac", e);
    }
    mac.update(id.getBytes(StandardCharsets.UTF_8));
    mac.update((byte) '.');
    mac.update(timestamp.getBytes(StandardCharsets.US_ASCII));
    mac.update((byte) '.');
    return mac.doFinal(body);
  }

  static Mac mac(WebhookSecret secret) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.key(), "HmacSHA256"));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java platform", e);
    }
  }

  @Override
  public String toString() {
    return "WebhookSigner{" + prototypes.size() + " secret(s)}";
  }
}
