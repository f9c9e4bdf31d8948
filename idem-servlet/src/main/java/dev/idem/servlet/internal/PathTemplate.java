package dev.idem.servlet.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A route template such as {@code /payments} or {@code /payments/{id}/refunds}: literal segments and whole-segment
 * variables. Matching is on the decoded path within the application (no context path), segment by segment, exact
 * and case-sensitive. Immutable.
 */
public final class PathTemplate {
  private final String template;
  private final String[] segments;
  private final boolean[] variable;

  private PathTemplate(String template, String[] segments, boolean[] variable) {
    this.template = template;
    this.segments = segments;
    this.variable = variable;
  }

  /**
   * Parses a template.
   *
   * @throws IllegalArgumentException when it does not start with '/', has an empty segment, or has a variable that
   *     is not a whole segment ({@code /a{b}}) or wildcards
   */
  public static PathTemplate parse(String template) {
    Objects.requireNonNull(template, "template");
    if (!template.startsWith("/")) {
      throw new IllegalArgumentException("route template '" + template + "' must start with '/'");
    }
    if (template.equals("/")) {
      return new PathTemplate(template, new String[0], new boolean[0]);
    }
    String body = template.endsWith("/") ? template.substring(1, template.length() - 1) : template.substring(1);
    String[] parts = body.split("/", -1);
    boolean[] vars = new boolean[parts.length];
    for (int i = 0; i < parts.length; i++) {
      String p = parts[i];
      if (p.isEmpty()) {
        throw new IllegalArgumentException("route template '" + template + "' has an empty segment");
      }
      if (p.indexOf('*') >= 0 || p.indexOf('?') >= 0) {
        throw new IllegalArgumentException("route template '" + template
            + "' has a wildcard; only literal segments and whole-segment variables such as {id} are supported");
      }
      boolean opens = p.indexOf('{') >= 0;
      boolean closes = p.indexOf('}') >= 0;
      if (opens || closes) {
        if (!(p.startsWith("{") && p.endsWith("}") && p.length() > 2 && p.indexOf('{', 1) < 0
            && p.indexOf('}') == p.length() - 1)) {
          throw new IllegalArgumentException("route template '" + template + "': variable segment '" + p
              + "' must be a whole segment such as {id}");
        }
        vars[i] = true;
      }
    }
    return new PathTemplate(template, parts, vars);
  }

  public boolean matches(String path) {
    if (path == null || path.isEmpty() || path.charAt(0) != '/') {
      return false;
    }
    List<String> parts = split(path);
    if (parts.size() != segments.length) {
      return false;
    }
    for (int i = 0; i < segments.length; i++) {
      String actual = parts.get(i);
      if (variable[i] ? actual.isEmpty() : !segments[i].equals(actual)) {
        return false;
      }
    }
    return true;
  }

  /** Literal segments count; a route with more literal segments wins over one with variables. */
  public int specificity() {
    int n = 0;
    for (boolean v : variable) {
      n += v ? 1 : 100;
    }
    return n;
  }

  public String template() {
    return template;
  }

  private static List<String> split(String path) {
    List<String> out = new ArrayList<>();
    int start = 1;
    int end = path.length();
    if (end > 1 && path.charAt(end - 1) == '/') {
      end--;
    }
    if (end <= 1) {
      return out;
    }
    for (int i = 1; i <= end; i++) {
      if (i == end || path.charAt(i) == '/') {
        out.add(path.substring(start, i));
        start = i + 1;
      }
    }
    return out;
  }

  @Override
  public String toString() {
    return template;
  }
}
