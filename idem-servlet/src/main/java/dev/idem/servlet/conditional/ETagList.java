package dev.idem.servlet.conditional;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The value of an {@code If-Match} or {@code If-None-Match} header (RFC 9110 sections 13.1.1 and 13.1.2):
 * {@code *} (any current representation) or a comma-separated list of entity-tags. Immutable and thread-safe.
 *
 * <pre>{@code
 * ETagList.parse(List.of("\"v1\", W/\"v2\""))   // Optional[["v1", W/"v2"]]
 * ETagList.parse(List.of("*"))                  // Optional[*]
 * ETagList.parse(List.of("v1"))                 // Optional.empty(): not quoted
 * }</pre>
 */
public final class ETagList {
  /** The longest header value accepted (all lines of the field together), in characters. */
  public static final int MAX_LENGTH = 8192;
  /** The most entity-tags one list may hold. */
  public static final int MAX_TAGS = 64;

  private static final ETagList ANY = new ETagList(true, List.of());

  private final boolean any;
  private final List<ETag> tags;

  private ETagList(boolean any, List<ETag> tags) {
    this.any = any;
    this.tags = tags;
  }

  /** {@code *}. */
  public static ETagList any() {
    return ANY;
  }

  /**
   * A list of entity-tags.
   *
   * @throws IllegalArgumentException when empty or longer than {@value #MAX_TAGS}
   */
  public static ETagList of(List<ETag> tags) {
    if (tags.isEmpty() || tags.size() > MAX_TAGS) {
      throw new IllegalArgumentException("an entity-tag list holds 1 to " + MAX_TAGS + " tags, got " + tags.size());
    }
    return new ETagList(false, List.copyOf(tags));
  }

  /**
   * Parses the lines of one header field (several lines of a field combine as one comma-separated list). Empty
   * list elements and optional whitespace are skipped, as RFC 9110 section 5.6.1 asks. Never throws.
   *
   * @return empty when the value is malformed: no tag at all, {@code *} mixed with tags, a tag that is not quoted,
   *     characters the RFC does not allow, more than {@value #MAX_LENGTH} characters or {@value #MAX_TAGS} tags
   */
  public static Optional<ETagList> parse(List<String> lines) {
    if (lines == null || lines.isEmpty()) {
      return Optional.empty();
    }
    String s = lines.size() == 1 ? lines.get(0) : String.join(",", lines);
    if (s == null || s.length() > MAX_LENGTH) {
      return Optional.empty();
    }
    if (s.strip().equals("*")) {
      return Optional.of(ANY);
    }
    List<ETag> tags = new ArrayList<>();
    int n = s.length();
    int i = 0;
    while (true) {
      while (i < n && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == ',')) {
        i++;
      }
      if (i == n) {
        break;
      }
      int quote = s.startsWith("W/", i) ? i + 2 : i;
      if (quote >= n || s.charAt(quote) != '"') {
        return Optional.empty();
      }
      int close = s.indexOf('"', quote + 1);
      if (close < 0) {
        return Optional.empty();
      }
      Optional<ETag> tag = ETag.parse(s, i, close + 1);
      if (tag.isEmpty() || tags.size() == MAX_TAGS) {
        return Optional.empty();
      }
      tags.add(tag.get());
      i = close + 1;
      while (i < n && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
        i++;
      }
      if (i < n && s.charAt(i) != ',') {
        return Optional.empty();
      }
    }
    return tags.isEmpty() ? Optional.empty() : Optional.of(new ETagList(false, Collections.unmodifiableList(tags)));
  }

  /** Whether this is {@code *}. */
  public boolean isAny() {
    return any;
  }

  /** The entity-tags, in the order sent; empty for {@code *}. */
  public List<ETag> tags() {
    return tags;
  }

  /**
   * The {@code If-Match} condition (RFC 9110 section 13.1.1): true when the resource has a current representation
   * and this is {@code *} or holds a tag that matches {@code current} by strong comparison.
   *
   * @param current the current representation's tag, or null when the resource has none
   */
  public boolean matchesStrongly(ETag current) {
    if (current == null) {
      return false;
    }
    return any || tags.stream().anyMatch(t -> t.strongMatch(current));
  }

  /**
   * Whether {@code If-None-Match} with this value finds a match (RFC 9110 section 13.1.2), which makes its condition
   * false: the resource has a current representation and this is {@code *} or holds a tag that matches
   * {@code current} by weak comparison.
   *
   * @param current the current representation's tag, or null when the resource has none
   */
  public boolean matchesWeakly(ETag current) {
    if (current == null) {
      return false;
    }
    return any || tags.stream().anyMatch(t -> t.weakMatch(current));
  }

  /** The header value. */
  @Override
  public String toString() {
    if (any) {
      return "*";
    }
    StringBuilder out = new StringBuilder();
    for (ETag t : tags) {
      if (out.length() > 0) {
        out.append(", ");
      }
      out.append(t);
    }
    return out.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ETagList && ((ETagList) o).any == any && ((ETagList) o).tags.equals(tags);
  }

  @Override
  public int hashCode() {
    return tags.hashCode() * 31 + (any ? 1 : 0);
  }
}
