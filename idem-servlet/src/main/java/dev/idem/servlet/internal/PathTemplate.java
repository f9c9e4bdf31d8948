package dev.idem.servlet.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A route template such as {@code /payments} or {@code /payments/{id}/refunds}: literal segments and whole-segment
 * variables, optionally with a regular expression ({@code {id:\\d+}}). Matching is on the decoded path within the
 * application (no context path), segment by segment, exact and case-sensitive; a trailing slash is a different
 * path (as in Spring MVC 6 and later). Immutable.
 */
public final class PathTemplate {
  private final String template;
  private final String[] segments;
  private final boolean[] variable;
  private final java.util.regex.Pattern[] patterns;

  private PathTemplate(String template, String[] segments, boolean[] variable, java.util.regex.Pattern[] patterns) {
    this.template = template;
    this.segments = segments;
    this.variable = variable;
    this.patterns = patterns;
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
      return new PathTemplate(template, new String[0], new boolean[0], new java.util.regex.Pattern[0]);
    }
    if (template.endsWith("/")) {
      throw new IllegalArgumentException("route template '" + template + "' ends with '/'; a trailing slash is a"
          + " different path");
    }
    String[] parts = template.substring(1).split("/", -1);
    boolean[] vars = new boolean[parts.length];
    java.util.regex.Pattern[] regexes = new java.util.regex.Pattern[parts.length];
    for (int i = 0; i < parts.length; i++) {
      String p = parts[i];
      if (p.isEmpty()) {
        throw new IllegalArgumentException("route template '" + template + "' has an empty segment");
      }
      if ((p.indexOf('*') >= 0 || p.indexOf('?') >= 0) && !p.startsWith("{")) {
        throw new IllegalArgumentException("route template '" + template
            + "' has a wildcard; only literal segments and whole-segment variables such as {id} are supported");
      }
      boolean opens = p.indexOf('{') >= 0;
      boolean closes = p.indexOf('}') >= 0;
      if (opens || closes) {
        if (!(p.startsWith("{") && p.endsWith("}") && p.length() > 2)) {
          throw new IllegalArgumentException("route template '" + template + "': variable segment '" + p
              + "' must be a whole segment such as {id}");
        }
        String inner = p.substring(1, p.length() - 1);
        int colon = inner.indexOf(':');
        String name = colon < 0 ? inner : inner.substring(0, colon);
        if (name.isEmpty() || name.indexOf('{') >= 0 || name.indexOf('}') >= 0 || name.indexOf('*') >= 0) {
          throw new IllegalArgumentException("route template '" + template + "': variable segment '" + p
              + "' must be a whole segment such as {id} or {id:[0-9]+}");
        }
        if (colon >= 0) {
          try {
            regexes[i] = java.util.regex.Pattern.compile(inner.substring(colon + 1));
          } catch (java.util.regex.PatternSyntaxException e) {
            throw new IllegalArgumentException("route template '" + template + "': '" + p
                + "' has an invalid regular expression: " + e.getDescription(), e);
          }
        }
        vars[i] = true;
      } else if (p.indexOf('*') >= 0 || p.indexOf('?') >= 0) {
        throw new IllegalArgumentException("route template '" + template
            + "' has a wildcard; only literal segments and whole-segment variables such as {id} are supported");
      }
    }
    return new PathTemplate(template, parts, vars, regexes);
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
      if (variable[i] ? actual.isEmpty() || patterns[i] != null && !patterns[i].matcher(actual).matches()
          : !segments[i].equals(actual)) {
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
