package dev.idem.core;

import java.util.List;
import java.util.Objects;

/**
 * The client's {@code Idempotency-Key}: 1 to 255 visible ASCII characters (0x21 to 0x7E). Immutable.
 *
 * <p>A key identifies one intent within a {@link Scope} and an {@link Operation}; the triple is the {@link RecordKey}.
 */
public final class IdempotencyKey implements Comparable<IdempotencyKey> {
  /** The longest accepted key, in characters. */
  public static final int MAX_LENGTH = 255;

  private final String value;

  private IdempotencyKey(String value) {
    this.value = value;
  }

  /**
   * Validates and wraps a key.
   *
   * @throws InvalidKeyException when the key is empty, longer than {@value #MAX_LENGTH} characters, or holds a
   *     character outside visible ASCII
   */
  public static IdempotencyKey of(String value) {
    if (value == null || value.isEmpty()) {
      throw new InvalidKeyException("Idempotency-Key is empty; send 1 to 255 visible ASCII characters");
    }
    if (value.length() > MAX_LENGTH) {
      throw new InvalidKeyException(
          "Idempotency-Key is " + value.length() + " characters long; the limit is " + MAX_LENGTH);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new InvalidKeyException(
            "Idempotency-Key holds character U+" + String.format("%04X", (int) c) + " at position " + i
                + "; only visible ASCII (0x21-0x7E) is allowed");
      }
    }
    return new IdempotencyKey(value);
  }

  /**
   * Reads a key from the values of one header, as a server receives them: exactly one value must be present.
   * A header line that folds several values with commas arrives here as one value and is judged as such.
   *
   * @throws InvalidKeyException when there is no value or more than one
   */
  public static IdempotencyKey fromHeaderValues(List<String> values) {
    Objects.requireNonNull(values, "values");
    if (values.isEmpty()) {
      throw new InvalidKeyException("Idempotency-Key header is missing");
    }
    if (values.size() > 1) {
      throw new InvalidKeyException(
          "Idempotency-Key header appears " + values.size() + " times; send exactly one value");
    }
    return of(values.get(0));
  }

  /**
   * {@code <key>:<name>}: this key with a call name appended. <strong>Not scoped</strong>: two tenants that send the
   * same key get the same string. For keys sent to another system use {@link RecordKey#derive} (in a phase,
   * {@code ctx.derivedKey("charge")}), which is unique per scope and operation. The result may exceed
   * {@value #MAX_LENGTH} characters when this key is near the limit.
   *
   * @param name a short name of the call, such as {@code "charge"}; visible ASCII, not empty
   */
  public String derive(String name) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("derived key name must not be empty");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new IllegalArgumentException("derived key name must be visible ASCII, got '" + name + "'");
      }
    }
    return value + ':' + name;
  }

  public String value() {
    return value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdempotencyKey && ((IdempotencyKey) o).value.equals(value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public int compareTo(IdempotencyKey o) {
    return value.compareTo(o.value);
  }

  @Override
  public String toString() {
    return value;
  }
}
