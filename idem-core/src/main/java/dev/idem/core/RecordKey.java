package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/** The identity of a record: (scope, operation, key). The store's primary key. */
public record RecordKey(Scope scope, Operation operation, IdempotencyKey key) {
  public RecordKey {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(key, "key");
  }

  public static RecordKey of(String scope, String operation, String key) {
    return new RecordKey(Scope.of(scope), Operation.of(operation), IdempotencyKey.of(key));
  }

  /**
   * The key for a call this operation makes to another system, as records without a key nonce derive it (records
   * claimed before nonces existed, so that an operation in flight across the upgrade resumes with the same key):
   * {@code <key>:<name>:<tag>}, where the tag is 12 hex characters of SHA-256 over the scope and the operation. Two
   * tenants that send the same client key therefore never share a key at the other system. The result is at most 255
   * visible ASCII characters: when the readable form would be longer, it is {@code idem:} plus the hex SHA-256 of all
   * four parts. Deterministic, and computable by anyone who knows the scope, operation and key: new records use
   * {@link #derive(String, String)} with their own nonce instead.
   *
   * @param name a short name of the call, such as {@code "charge"}; visible ASCII, not empty
   */
  public String derive(String name) {
    String readable = key.derive(name);
    String tag = sha256Hex(scope.value() + '\u0000' + operation.name()).substring(0, 12);
    String derived = readable + ':' + tag;
    if (derived.length() <= IdempotencyKey.MAX_LENGTH) {
      return derived;
    }
    return "idem:" + sha256Hex(scope.value() + '\u0000' + operation.name() + '\u0000' + key.value() + '\u0000' + name);
  }

  /**
   * The key for a call this operation makes to another system, carrying the record's own random {@code nonce}
   * ({@link IdempotencyRecord#keyNonce()}): {@code <key>:<name>:<tag>}, where the tag is 24 hex characters of
   * SHA-256 over the scope, the operation and the nonce. Unique to the record, the same on every run of it, and not
   * computable without the nonce, so nobody outside can use the key at the other system first. At most 255 visible
   * ASCII characters: when the readable form would be longer, it is {@code idem:} plus the hex SHA-256 of all five
   * parts. A {@code null} nonce gives {@link #derive(String)}.
   *
   * @param name a short name of the call, such as {@code "charge"}; visible ASCII, not empty
   * @param nonce the record's key nonce, or {@code null} for a record that has none
   */
  public String derive(String name, String nonce) {
    if (nonce == null) {
      return derive(name);
    }
    String readable = key.derive(name);
    String tag = sha256Hex(scope.value() + '\u0000' + operation.name() + '\u0000' + nonce).substring(0, 24);
    String derived = readable + ':' + tag;
    if (derived.length() <= IdempotencyKey.MAX_LENGTH) {
      return derived;
    }
    return "idem:" + sha256Hex(scope.value() + '\u0000' + operation.name() + '\u0000' + key.value() + '\u0000' + name
        + '\u0000' + nonce);
  }

  private static String sha256Hex(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  @Override
  public String toString() {
    return scope + "/" + operation + "/" + key;
  }
}
