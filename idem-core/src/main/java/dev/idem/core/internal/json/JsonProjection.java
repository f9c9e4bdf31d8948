package dev.idem.core.internal.json;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The include and exclude JSON Pointers of a fingerprint policy as two prefix trees, matched against a
 * {@link JsonTape} while the canonical writer walks it. Immutable and thread-safe.
 *
 * <p>Semantics: with includes, a value is kept when its pointer is one of the includes or lies below one; the
 * objects and arrays on the way to an include are kept as containers holding only what was kept, and a container
 * on the way that ends up with nothing in it is dropped (so the result depends only on the values at the
 * includes). The root is always kept when it is an object or an array. Then excludes remove the values at their
 * pointers (with everything below them); a container emptied by excludes stays, as an empty container. All pointers
 * address the document as received: array indices are those before anything was removed. A reference token matches
 * an object member of that name and, when it is a non-negative decimal integer without leading zeros, the array
 * element at that index. Pointers that match nothing have no effect.
 */
public final class JsonProjection {
  /** A node of a prefix tree; {@code terminal} when a pointer ends here. */
  static final class Node {
    final String name;
    final byte[] utf8;
    final int index;
    boolean terminal;
    final List<Node> children = new ArrayList<>(2);

    Node(String name) {
      this.name = name;
      this.utf8 = name.getBytes(StandardCharsets.UTF_8);
      this.index = arrayIndex(name);
    }

    Node child(String token) {
      for (Node c : children) {
        if (c.name.equals(token)) {
          return c;
        }
      }
      Node c = new Node(token);
      children.add(c);
      return c;
    }

    /** The child matching member name token {@code t} of {@code tape}, or null. */
    Node member(JsonTape tape, int t) {
      List<Node> cs = children;
      for (int i = 0, n = cs.size(); i < n; i++) {
        Node c = cs.get(i);
        if (tape.nameEquals(t, c.utf8, c.name)) {
          return c;
        }
      }
      return null;
    }

    /** The child matching array index {@code i}, or null. */
    Node element(int i) {
      List<Node> cs = children;
      for (int k = 0, n = cs.size(); k < n; k++) {
        Node c = cs.get(k);
        if (c.index == i) {
          return c;
        }
      }
      return null;
    }
  }

  private static final JsonProjection NONE = new JsonProjection(null, null, true);

  /** Root of the include tree; null when everything is included. */
  final Node include;
  /** Root of the exclude tree; null when nothing is excluded. */
  final Node exclude;
  private final boolean identity;

  private JsonProjection(Node include, Node exclude, boolean identity) {
    this.include = include;
    this.exclude = exclude;
    this.identity = identity;
  }

  /** The projection that keeps the whole document. */
  public static JsonProjection none() {
    return NONE;
  }

  /**
   * Builds the projection for already validated pointers.
   *
   * @throws IllegalArgumentException when a pointer is invalid, or an exclude is the empty pointer (the whole body)
   */
  public static JsonProjection of(Collection<String> includes, Collection<String> excludes) {
    Node include = null;
    if (!includes.isEmpty()) {
      include = new Node("");
      for (String pointer : includes) {
        Node n = include;
        for (String token : JsonPointer.parse(pointer)) {
          n = n.child(token);
        }
        n.terminal = true;
      }
      if (include.terminal) {
        include = null;
      } else {
        prune(include);
      }
    }
    Node exclude = null;
    if (!excludes.isEmpty()) {
      exclude = new Node("");
      for (String pointer : excludes) {
        List<String> tokens = JsonPointer.parse(pointer);
        if (tokens.isEmpty()) {
          throw new IllegalArgumentException("an exclude of the empty pointer would remove the whole body");
        }
        Node n = exclude;
        for (String token : tokens) {
          n = n.child(token);
        }
        n.terminal = true;
      }
      prune(exclude);
    }
    return include == null && exclude == null ? NONE : new JsonProjection(include, exclude, false);
  }

  /** A terminal node covers everything below it: drop its children. */
  private static void prune(Node n) {
    if (n.terminal) {
      n.children.clear();
      return;
    }
    for (Node c : n.children) {
      prune(c);
    }
  }

  /** Whether this projection keeps every document unchanged. */
  public boolean isIdentity() {
    return identity;
  }

  static int arrayIndex(String token) {
    int len = token.length();
    if (len == 0 || len > 9 || (token.charAt(0) == '0' && len > 1)) {
      return -1;
    }
    int v = 0;
    for (int i = 0; i < len; i++) {
      char c = token.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}
