package dev.idem.bench.http;

import dev.idem.core.protocol.IdemHeaders;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a {@link Scenario} fills the {@value #HEADER} header: not at all, with a fresh key per request (every request
 * is a first execution), or from a fixed pool of keys used round-robin (every request after the pool's first round
 * is a replay; the harness sends each pool key once during warm-up). Immutable and thread-safe.
 */
public final class KeyStrategy {
  /** The request header that carries the key ({@link IdemHeaders#IDEMPOTENCY_KEY}). */
  public static final String HEADER = IdemHeaders.IDEMPOTENCY_KEY;

  /** The kind of a strategy. */
  public enum Kind {
    /** No key header. */
    NONE,
    /** A fresh random key per request. */
    UNIQUE,
    /** Keys {@code <prefix>0 .. <prefix>(n-1)}, round-robin. */
    FIXED_POOL
  }

  private static final KeyStrategy NONE = new KeyStrategy(Kind.NONE, 0, "");
  private static final KeyStrategy UNIQUE = new KeyStrategy(Kind.UNIQUE, 0, "");

  private final Kind kind;
  private final int poolSize;
  private final String prefix;

  private KeyStrategy(Kind kind, int poolSize, String prefix) {
    this.kind = kind;
    this.poolSize = poolSize;
    this.prefix = prefix;
  }

  /** No {@value #HEADER} header. */
  public static KeyStrategy none() {
    return NONE;
  }

  /** A fresh random UUID key per request: every request is a first execution. */
  public static KeyStrategy unique() {
    return UNIQUE;
  }

  /** Keys {@code k-0 .. k-(n-1)} chosen round-robin: once each key has been sent, every request is a replay. */
  public static KeyStrategy fixedPool(int n) {
    return fixedPool(n, "k-");
  }

  /**
   * Keys {@code prefix0 .. prefix(n-1)} chosen round-robin; a run-specific prefix keeps a rerun against a server
   * that remembers earlier keys from replaying them.
   */
  public static KeyStrategy fixedPool(int n, String prefix) {
    if (n < 1) {
      throw new IllegalArgumentException("pool size must be at least 1, got " + n);
    }
    Objects.requireNonNull(prefix, "prefix");
    if (!prefix.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException("key prefix must be printable ASCII without spaces, got \"" + prefix + "\"");
    }
    return new KeyStrategy(Kind.FIXED_POOL, n, prefix);
  }

  /**
   * Parses the command-line form {@code none}, {@code unique} or {@code pool:N}, the inverse of {@link #toString()}
   * for the default prefix.
   */
  public static KeyStrategy parse(String text) {
    Objects.requireNonNull(text, "text");
    if (text.equals("none")) {
      return NONE;
    }
    if (text.equals("unique")) {
      return UNIQUE;
    }
    if (text.startsWith("pool:")) {
      String n = text.substring("pool:".length());
      try {
        return fixedPool(Integer.parseInt(n));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("keys pool size must be an integer, got \"" + n + "\"", e);
      }
    }
    throw new IllegalArgumentException("keys must be none, unique or pool:N, got \"" + text + "\"");
  }

  public Kind kind() {
    return kind;
  }

  /** The number of keys in the pool; 0 unless {@link Kind#FIXED_POOL}. */
  public int poolSize() {
    return poolSize;
  }

  /** The key of pool slot {@code slot}; only for {@link Kind#FIXED_POOL}. */
  public String poolKey(int slot) {
    if (kind != Kind.FIXED_POOL) {
      throw new IllegalStateException("not a pool strategy: " + this);
    }
    if (slot < 0 || slot >= poolSize) {
      throw new IllegalArgumentException("slot must be in [0, " + poolSize + "), got " + slot);
    }
    return prefix + slot;
  }

  static String randomKey() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long high = (random.nextLong() & ~0xf000L) | 0x4000L;
    long low = (random.nextLong() & 0x3fffffffffffffffL) | 0x8000000000000000L;
    return new UUID(high, low).toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyStrategy other && kind == other.kind && poolSize == other.poolSize
        && prefix.equals(other.prefix);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, poolSize, prefix);
  }

  /** {@code none}, {@code unique}, {@code pool:N}, or {@code pool:N:prefix} for a non-default prefix. */
  @Override
  public String toString() {
    return switch (kind) {
      case NONE -> "none";
      case UNIQUE -> "unique";
      case FIXED_POOL -> "pool:" + poolSize + (prefix.equals("k-") ? "" : ":" + prefix);
    };
  }
}
