package dev.idem.servlet.conditional;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * An entity-tag (RFC 9110 section 8.8.3): an opaque validator of one representation of a resource, strong or weak.
 * Immutable and thread-safe.
 *
 * <pre>{@code
 * ETag tag = ETag.ofVersion(7);            // "v7", strong: the version column of the row
 * response.setHeader("ETag", tag.toString());
 * ETag.parse("W/\"v7\"")                    // Optional[W/"v7"]
 * tag.strongMatch(ETag.weak("v7"))          // false: a weak tag never matches strongly
 * tag.weakMatch(ETag.weak("v7"))            // true
 * }</pre>
 *
 * <p>The opaque part is kept without its quotes. Tags made here ({@link #strong}, {@link #weak},
 * {@link #ofVersion}) use visible US-ASCII only; parsed tags may also hold {@code obs-text} (0x80 to 0xFF), as the
 * RFC allows.
 */
public final class ETag {
  /** The longest opaque part accepted, in characters. */
  public static final int MAX_OPAQUE_LENGTH = 256;
  private static final String VERSION_PREFIX = "v";

  private final String opaque;
  private final boolean weak;

  private ETag(String opaque, boolean weak) {
    this.opaque = opaque;
    this.weak = weak;
  }

  /**
   * A strong entity-tag.
   *
   * @param opaque the tag without quotes: 0 to {@value #MAX_OPAQUE_LENGTH} visible US-ASCII characters except
   *     {@code "}
   * @throws IllegalArgumentException naming the first character the RFC does not allow
   */
  public static ETag strong(String opaque) {
    return new ETag(checkCreated(opaque), false);
  }

  /** A weak entity-tag ({@code W/"..."}); same rules as {@link #strong}. */
  public static ETag weak(String opaque) {
    return new ETag(checkCreated(opaque), true);
  }

  /**
   * The strong entity-tag of a resource version: {@code "v<version>"}. Use it with a version column that every write
   * of the resource increments, so that two representations with the same tag are byte for byte the same.
   *
   * @throws IllegalArgumentException for a negative version
   */
  public static ETag ofVersion(long version) {
    if (version < 0) {
      throw new IllegalArgumentException("a resource version must be >= 0, got " + version);
    }
    return new ETag(VERSION_PREFIX + version, false);
  }

  /**
   * One entity-tag as written in an {@code ETag} header: {@code "xyz"} or {@code W/"xyz"}, with optional
   * surrounding whitespace. Never throws.
   *
   * @return empty for anything else (no quotes, a lower-case {@code w/}, characters the RFC does not allow, longer
   *     than {@value #MAX_OPAQUE_LENGTH})
   */
  public static Optional<ETag> parse(String value) {
    if (value == null) {
      return Optional.empty();
    }
    return parse(value.strip(), 0, value.strip().length());
  }

  /** Parses {@code s[from, to)} exactly as one entity-tag; empty if it is not one. */
  static Optional<ETag> parse(String s, int from, int to) {
    boolean weak = false;
    int i = from;
    if (to - i >= 2 && s.charAt(i) == 'W' && s.charAt(i + 1) == '/') {
      weak = true;
      i += 2;
    }
    if (to - i < 2 || s.charAt(i) != '"' || s.charAt(to - 1) != '"') {
      return Optional.empty();
    }
    int start = i + 1;
    int end = to - 1;
    if (end - start > MAX_OPAQUE_LENGTH) {
      return Optional.empty();
    }
    for (int j = start; j < end; j++) {
      if (!isEtagc(s.charAt(j))) {
        return Optional.empty();
      }
    }
    return Optional.of(new ETag(s.substring(start, end), weak));
  }

  /** {@code etagc = %x21 / %x23-7E / obs-text}. */
  static boolean isEtagc(char c) {
    return c == 0x21 || (c >= 0x23 && c <= 0x7E) || (c >= 0x80 && c <= 0xFF);
  }

  private static String checkCreated(String opaque) {
    Objects.requireNonNull(opaque, "opaque");
    if (opaque.length() > MAX_OPAQUE_LENGTH) {
      throw new IllegalArgumentException("an entity-tag's opaque part must be at most " + MAX_OPAQUE_LENGTH
          + " characters, got " + opaque.length());
    }
    for (int i = 0; i < opaque.length(); i++) {
      char c = opaque.charAt(i);
      if (!(c == 0x21 || (c >= 0x23 && c <= 0x7E))) {
        throw new IllegalArgumentException("an entity-tag's opaque part may hold visible US-ASCII characters"
            + " except '\"' only; got U+" + String.format("%04X", (int) c) + " at index " + i);
      }
    }
    return opaque;
  }

  /** The tag without quotes and without {@code W/}. */
  public String opaque() {
    return opaque;
  }

  public boolean isWeak() {
    return weak;
  }

  /**
   * The version of a tag made by {@link #ofVersion}: empty for a weak tag or any other opaque part (including
   * non-canonical digits such as {@code "v007"}).
   */
  public OptionalLong version() {
    return weak ? OptionalLong.empty() : versionOf(opaque);
  }

  /** The version an opaque part made by {@link #ofVersion} names, whatever the tag's weakness. */
  static OptionalLong versionOf(String opaque) {
    if (!opaque.startsWith(VERSION_PREFIX)) {
      return OptionalLong.empty();
    }
    String digits = opaque.substring(VERSION_PREFIX.length());
    if (digits.isEmpty() || digits.length() > 18 || (digits.length() > 1 && digits.charAt(0) == '0')) {
      return OptionalLong.empty();
    }
    for (int i = 0; i < digits.length(); i++) {
      if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
        return OptionalLong.empty();
      }
    }
    return OptionalLong.of(Long.parseLong(digits));
  }

  /** Strong comparison (RFC 9110 section 8.8.3.2): both strong and the same opaque part. Used by If-Match. */
  public boolean strongMatch(ETag other) {
    return !weak && !other.weak && opaque.equals(other.opaque);
  }

  /** Weak comparison: the same opaque part, weak or not. Used by If-None-Match. */
  public boolean weakMatch(ETag other) {
    return opaque.equals(other.opaque);
  }

  /** The header value: {@code "opaque"} or {@code W/"opaque"}. */
  @Override
  public String toString() {
    return (weak ? "W/\"" : "\"") + opaque + '"';
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ETag && ((ETag) o).weak == weak && ((ETag) o).opaque.equals(opaque);
  }

  @Override
  public int hashCode() {
    return opaque.hashCode() * 31 + (weak ? 1 : 0);
  }
}
