package dev.idem.outbox.webhook;

import dev.idem.outbox.webhook.WebhookVerificationException.Reason;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import javax.crypto.Mac;

/**
 * Verifies Standard Webhooks signatures over the raw body: the timestamp must be within the tolerance (default 5
 * minutes either way), and at least one {@code v1} signature in the header must match one of the secrets. Signatures
 * are compared in constant time. The signed content is {@code id + "." + timestamp + "." + body} with the
 * {@code webhook-timestamp} header's bytes exactly as received (ASCII digits, at most
 * {@value #MAX_TIMESTAMP_DIGITS} of them, leading zeros kept), never the parsed number re-formatted: a signature
 * covers one byte string only. The tolerance is checked on the parsed value. Thread-safe.
 *
 * <pre>{@code
 * WebhookVerifier verifier = WebhookVerifier.builder(WebhookSecret.parse(current), WebhookSecret.parse(previous))
 *     .build();
 * verifier.verify(id, timestamp, signatureHeader, rawBody); // throws WebhookVerificationException
 * }</pre>
 */
public final class WebhookVerifier {
  /** At most this many signatures in one header are looked at. */
  public static final int MAX_SIGNATURES = 16;
  /** The longest {@code webhook-timestamp} accepted, in digits (leading zeros included): any such value fits a long. */
  public static final int MAX_TIMESTAMP_DIGITS = 18;
  private static final int MAX_HEADER = 4096;
  private static final int MAX_ID = 255;

  private final List<Mac> prototypes;
  private final Duration tolerance;
  private final Clock clock;
  private final int maxBodyBytes;

  private WebhookVerifier(Builder b) {
    this.prototypes = b.secrets.stream().map(WebhookSigner::mac).toList();
    this.tolerance = b.tolerance;
    this.clock = b.clock;
    this.maxBodyBytes = b.maxBodyBytes;
  }

  /** A builder accepting signatures made with any of {@code secrets} (the current one and those being rotated out). */
  public static Builder builder(WebhookSecret... secrets) {
    return new Builder(List.of(secrets));
  }

  public static Builder builder(List<WebhookSecret> secrets) {
    return new Builder(List.copyOf(secrets));
  }

  /** The largest body this verifier accepts. */
  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  /**
   * Checks a webhook.
   *
   * @param id the {@code webhook-id} header
   * @param timestamp the {@code webhook-timestamp} header, Unix seconds, as received: the signature is checked over
   *     these bytes
   * @param signatureHeader the {@code webhook-signature} header
   * @param body the raw body, exactly as received
   * @throws WebhookVerificationException when any check fails
   */
  public void verify(String id, String timestamp, String signatureHeader, byte[] body) {
    checkHeaders(id, timestamp, signatureHeader);
    Objects.requireNonNull(body, "body");
    if (body.length > maxBodyBytes) {
      throw new WebhookVerificationException(Reason.BODY_TOO_LARGE, "body is larger than " + maxBodyBytes + " bytes");
    }
    List<byte[]> offered = parseSignatures(signatureHeader);
    boolean match = false;
    for (Mac prototype : prototypes) {
      // the header's bytes as received (checkHeaders allowed ASCII digits only), not the parsed value re-formatted
      byte[] expected = WebhookSigner.digest(prototype, id, timestamp, body);
      for (byte[] candidate : offered) {
        // no early exit on a match: every candidate is compared, in constant time each
        match |= MessageDigest.isEqual(expected, candidate);
      }
    }
    if (!match) {
      throw new WebhookVerificationException(Reason.SIGNATURE_MISMATCH, "no signature matches");
    }
  }

  /**
   * The checks of {@link #verify} that need no body: the id, the signature header's presence and length, and the
   * timestamp's form and distance from now. A receiver makes them before it reads the body, so that a request that
   * cannot pass costs no body read.
   *
   * @return the timestamp, Unix seconds
   * @throws WebhookVerificationException when a check fails
   */
  public long checkHeaders(String id, String timestamp, String signatureHeader) {
    if (id == null || id.isEmpty() || id.length() > MAX_ID || !id.chars().allMatch(c -> c >= 0x21 && c <= 0x7e)) {
      throw new WebhookVerificationException(Reason.MALFORMED_HEADERS, "webhook-id is missing or malformed");
    }
    if (signatureHeader == null || signatureHeader.isEmpty() || signatureHeader.length() > MAX_HEADER) {
      throw new WebhookVerificationException(Reason.MALFORMED_HEADERS, "webhook-signature is missing or too long");
    }
    long seconds = parseTimestamp(timestamp);
    long now = clock.millis() / 1000;
    if (Math.abs(now - seconds) > tolerance.toSeconds()) {
      throw new WebhookVerificationException(Reason.TIMESTAMP_OUT_OF_TOLERANCE,
          "webhook-timestamp is more than " + tolerance.toSeconds() + " s away from now");
    }
    return seconds;
  }

  private static long parseTimestamp(String timestamp) {
    if (timestamp == null || timestamp.isEmpty()) {
      throw new WebhookVerificationException(Reason.MALFORMED_HEADERS, "webhook-timestamp is missing");
    }
    if (timestamp.length() > MAX_TIMESTAMP_DIGITS) {
      throw new WebhookVerificationException(Reason.MALFORMED_HEADERS,
          "webhook-timestamp is longer than " + MAX_TIMESTAMP_DIGITS + " characters");
    }
    if (!timestamp.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new WebhookVerificationException(Reason.MALFORMED_HEADERS,
          "webhook-timestamp must be Unix seconds in ASCII digits only");
    }
    return Long.parseLong(timestamp);
  }

  private static List<byte[]> parseSignatures(String header) {
    List<byte[]> out = new ArrayList<>();
    for (String part : header.split(" ")) {
      if (out.size() == MAX_SIGNATURES) {
        break;
      }
      if (!part.startsWith("v1,")) {
        continue; // other versions (v1a asymmetric) are not ours to check
      }
      String encoded = part.substring(3);
      try {
        byte[] sig = Base64.getDecoder().decode(encoded);
        // Only the canonical spelling: the decoder also takes a signature without its padding, or with other bits in
        // the unused low bits of its last character, which would let one signature be written several ways.
        if (sig.length == 32 && Base64.getEncoder().encodeToString(sig).equals(encoded)) {
          out.add(sig);
        }
      } catch (IllegalArgumentException ignored) {
        // not base64: cannot match
      }
    }
    if (out.isEmpty()) {
      throw new WebhookVerificationException(Reason.SIGNATURE_MISMATCH, "no v1 signature in webhook-signature");
    }
    return out;
  }

  @Override
  public String toString() {
    return "WebhookVerifier{" + prototypes.size() + " secret(s), tolerance=" + tolerance + '}';
  }

  /** Builds a {@link WebhookVerifier}. */
  public static final class Builder {
    private final List<WebhookSecret> secrets;
    private Duration tolerance = Duration.ofMinutes(5);
    private Clock clock = Clock.systemUTC();
    private int maxBodyBytes = 1 << 20;

    private Builder(List<WebhookSecret> secrets) {
      if (secrets.isEmpty()) {
        throw new IllegalArgumentException("at least one secret is required");
      }
      this.secrets = secrets;
    }

    /** How far a timestamp may be from now, either way (default 5 minutes). */
    public Builder tolerance(Duration tolerance) {
      if (tolerance == null || tolerance.isNegative() || tolerance.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("tolerance must be 0 to 1 hour, got " + tolerance);
      }
      this.tolerance = tolerance;
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The largest body accepted (default 1 MiB). */
    public Builder maxBodyBytes(int max) {
      if (max < 1 || max > 64 << 20) {
        throw new IllegalArgumentException("maxBodyBytes must be 1 byte to 64 MiB, got " + max);
      }
      this.maxBodyBytes = max;
      return this;
    }

    public WebhookVerifier build() {
      return new WebhookVerifier(this);
    }
  }
}
