package dev.idem.core.fingerprint;

import dev.idem.core.internal.json.JsonPointer;
import dev.idem.core.internal.json.JsonTape;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Which parts of a JSON request body a {@link Fingerprinter} hashes. Immutable and thread-safe.
 *
 * <p>By default ({@link #ofDefaults()}) the whole body counts. {@link Builder#include includes} limit the
 * fingerprint to the values at the given JSON Pointers (RFC 6901, for example {@code /amount} or
 * {@code /items/0/sku}, with {@code ~1} for {@code /} and {@code ~0} for {@code ~} inside a name); the objects and
 * arrays on the way are kept as containers holding only what was selected, and one that ends up empty is dropped,
 * so nothing outside the includes can change the fingerprint. {@link Builder#exclude Excludes} then remove values
 * (volatile fields such as {@code /timestamp} or a client-generated {@code /nonce}). Both address the body as the
 * client sent it (array indices before anything was removed); a pointer that matches nothing has no effect.
 * Includes and excludes do not apply to bodies hashed raw (not JSON).
 *
 * <p>{@link #maxDepth()} bounds the nesting of objects and arrays (default {@value #DEFAULT_MAX_DEPTH}); a deeper body
 * is not valid JSON for Idem and is hashed raw by {@link Fingerprinter#fingerprint}.
 *
 * <p>Implementation note: unlike the behavioural policies, this is a final value class rather than an interface
 * with an internal implementation: it is pure configuration, with nothing to vary.
 */
public final class FingerprintPolicy {
  /** Default nesting limit of objects and arrays. */
  public static final int DEFAULT_MAX_DEPTH = JsonTape.DEFAULT_MAX_DEPTH;
  /** Highest nesting limit a policy accepts (parsing is recursive). */
  public static final int MAX_MAX_DEPTH = 1024;

  private static final FingerprintPolicy DEFAULTS = new FingerprintPolicy(List.of(), List.of(), DEFAULT_MAX_DEPTH);

  private final List<String> includes;
  private final List<String> excludes;
  private final int maxDepth;

  private FingerprintPolicy(List<String> includes, List<String> excludes, int maxDepth) {
    this.includes = includes;
    this.excludes = excludes;
    this.maxDepth = maxDepth;
  }

  /** The whole body, nesting limited to {@value #DEFAULT_MAX_DEPTH}. */
  public static FingerprintPolicy ofDefaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this policy's settings. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.includes.addAll(includes);
    b.excludes.addAll(excludes);
    b.maxDepth = maxDepth;
    return b;
  }

  /** The include pointers in the order given, without repeats; empty means the whole body. */
  public List<String> includes() {
    return includes;
  }

  /** The exclude pointers in the order given, without repeats. */
  public List<String> excludes() {
    return excludes;
  }

  /** The nesting limit of objects and arrays. */
  public int maxDepth() {
    return maxDepth;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FingerprintPolicy
        && includes.equals(((FingerprintPolicy) o).includes)
        && excludes.equals(((FingerprintPolicy) o).excludes)
        && maxDepth == ((FingerprintPolicy) o).maxDepth;
  }

  @Override
  public int hashCode() {
    return Objects.hash(includes, excludes, maxDepth);
  }

  @Override
  public String toString() {
    return "FingerprintPolicy{includes=" + includes + ", excludes=" + excludes + ", maxDepth=" + maxDepth + "}";
  }

  /**
   * Collects the settings of a {@link FingerprintPolicy}, validating each as it is given. Mutable, not thread-safe.
   */
  public static final class Builder {
    private final Set<String> includes = new LinkedHashSet<>();
    private final Set<String> excludes = new LinkedHashSet<>();
    private int maxDepth = DEFAULT_MAX_DEPTH;

    private Builder() {}

    /**
     * Adds JSON Pointers whose values the fingerprint covers; with none, it covers the whole body. {@code ""} is the
     * whole body.
     *
     * @throws IllegalArgumentException naming the bad pointer when one is not a valid JSON Pointer
     */
    public Builder include(String... pointers) {
      add("include", includes, pointers, true);
      return this;
    }

    /**
     * Adds JSON Pointers whose values the fingerprint ignores.
     *
     * @throws IllegalArgumentException naming the bad pointer when one is not a valid JSON Pointer or is {@code ""}
     */
    public Builder exclude(String... pointers) {
      add("exclude", excludes, pointers, false);
      return this;
    }

    /**
     * Sets the nesting limit of objects and arrays, 1 to {@value #MAX_MAX_DEPTH}.
     *
     * @throws IllegalArgumentException when out of range
     */
    public Builder maxDepth(int maxDepth) {
      if (maxDepth < 1 || maxDepth > MAX_MAX_DEPTH) {
        throw new IllegalArgumentException("maxDepth must be between 1 and " + MAX_MAX_DEPTH + ", got " + maxDepth);
      }
      this.maxDepth = maxDepth;
      return this;
    }

    public FingerprintPolicy build() {
      if (includes.isEmpty() && excludes.isEmpty() && maxDepth == DEFAULT_MAX_DEPTH) {
        return DEFAULTS;
      }
      return new FingerprintPolicy(List.copyOf(includes), List.copyOf(excludes), maxDepth);
    }

    private static void add(String parameter, Set<String> into, String[] pointers, boolean rootAllowed) {
      Objects.requireNonNull(pointers, parameter + " pointers");
      List<String> valid = new ArrayList<>(pointers.length);
      for (String pointer : pointers) {
        if (pointer == null) {
          throw new IllegalArgumentException(parameter + " pointer must not be null");
        }
        try {
          JsonPointer.parse(pointer);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(parameter + " pointer '" + pointer + "' is not a JSON Pointer: "
              + e.getMessage() + " (for example \"/amount\" or \"/items/0/sku\")", e);
        }
        if (!rootAllowed && pointer.isEmpty()) {
          throw new IllegalArgumentException(parameter + " pointer '' would remove the whole body; "
              + "to ignore the body, fingerprint the operation with an empty body instead");
        }
        valid.add(pointer);
      }
      into.addAll(valid);
    }
  }
}
