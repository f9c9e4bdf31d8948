package dev.idem.outbox;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/** What a transport made of one message: delivered, failed for now (retried with backoff), or failed for good. */
public final class DeliveryResult {
  private static final DeliveryResult DELIVERED = new DeliveryResult(Kind.DELIVERED, null, null, null);

  /** The three outcomes. */
  public enum Kind {
    /** The destination accepted the message. */
    DELIVERED,
    /** Try again after the relay's backoff, or after {@link #retryAfter()} when the destination asked for a delay. */
    RETRY,
    /** Do not try again: the event is dead at once (e.g. an endpoint answered 410 Gone). */
    PERMANENT
  }

  private final Kind kind;
  private final String error;
  private final Integer responseCode;
  private final Duration retryAfter;

  private DeliveryResult(Kind kind, String error, Integer responseCode, Duration retryAfter) {
    this.kind = kind;
    this.error = error;
    this.responseCode = responseCode;
    this.retryAfter = retryAfter;
  }

  public static DeliveryResult delivered() {
    return DELIVERED;
  }

  /** A failure worth retrying; {@code responseCode} may be null when there was no response. */
  public static DeliveryResult retry(String error, Integer responseCode) {
    return new DeliveryResult(Kind.RETRY, Objects.requireNonNull(error, "error"), responseCode, null);
  }

  /** A failure worth retrying no sooner than {@code retryAfter} (a destination's {@code Retry-After}). */
  public static DeliveryResult retryAfter(String error, Integer responseCode, Duration retryAfter) {
    if (Objects.requireNonNull(retryAfter, "retryAfter").isNegative()) {
      throw new IllegalArgumentException("retryAfter must not be negative");
    }
    return new DeliveryResult(Kind.RETRY, Objects.requireNonNull(error, "error"), responseCode, retryAfter);
  }

  /** A failure that no retry will fix: the event is dead now. */
  public static DeliveryResult permanent(String error, Integer responseCode) {
    return new DeliveryResult(Kind.PERMANENT, Objects.requireNonNull(error, "error"), responseCode, null);
  }

  public Kind kind() {
    return kind;
  }

  public boolean isDelivered() {
    return kind == Kind.DELIVERED;
  }

  /** The error kept in the attempt history; empty when delivered. */
  public Optional<String> error() {
    return Optional.ofNullable(error);
  }

  /** The destination's response code (an HTTP status), if there was one. */
  public Optional<Integer> responseCode() {
    return Optional.ofNullable(responseCode);
  }

  /** The delay the destination asked for, if any. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  @Override
  public String toString() {
    return kind == Kind.DELIVERED ? "delivered" : kind.name().toLowerCase() + '(' + error
        + (responseCode == null ? "" : ", " + responseCode) + (retryAfter == null ? "" : ", after " + retryAfter) + ')';
  }
}
