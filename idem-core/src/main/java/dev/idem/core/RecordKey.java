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
   * The key for a call this operation makes to another system, unique to this record's scope and operation:
   * {@code <key>:<name>:<tag>}, where the tag is 12 hex characters of SHA-256 over the scope and the operation. Two
   * tenants that send the same client key therefore never share a key at the other system. The result is at most 255
   * visible ASCII characters: when the readable form would be longer, it is {@code idem:} plus the hex SHA-256 of all
   * four parts. Deterministic: every worker, retry and completer computes the same derived key.
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
