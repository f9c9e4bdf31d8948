package dev.idem.examples.plainservlet;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;

/**
 * The other system that {@code POST /shipments} calls: it books a shipment and answers a tracking number. The call
 * carries a key derived from the request's idempotency key, so a real carrier that deduplicates on it books once
 * even when a resumed request calls it again.
 */
@FunctionalInterface
public interface Carrier {

  /** Books the shipment and returns its tracking number. */
  String book(String carrierKey, String shipmentId) throws Exception;

  /**
   * A stand-in for a slow carrier: it takes {@code delay}, then answers a tracking number derived from the key
   * (the same key always gets the same number, as a deduplicating carrier would answer).
   */
  static Carrier simulated(Duration delay) {
    return (carrierKey, shipmentId) -> {
      Thread.sleep(delay.toMillis());
      return "TRK-" + HexFormat.of().formatHex(sha256(carrierKey), 0, 6).toUpperCase(java.util.Locale.ROOT);
    };
  }

  private static byte[] sha256(String s) throws NoSuchAlgorithmException {
    return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
  }
}
