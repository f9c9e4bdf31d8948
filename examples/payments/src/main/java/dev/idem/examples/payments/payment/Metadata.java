package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.web.ApiProblem;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code metadata} of a payment or an account: a JSON object of at most {@value #MAX_ENTRIES} string values,
 * keyed by 1 to {@value #MAX_KEY} letters, digits or {@code _ . -}, each value at most {@value #MAX_VALUE}
 * characters. Kept sorted by key, so that one set of entries has one representation. Stateless.
 */
public final class Metadata {
  public static final int MAX_ENTRIES = 20;
  public static final int MAX_KEY = 40;
  public static final int MAX_VALUE = 500;
  /** The stored JSON's length: the H2 column's width, and within MariaDB's TEXT in UTF-8. */
  public static final int MAX_COLUMN = 16_000;
  private static final Pattern KEY = Pattern.compile("[A-Za-z0-9_.-]{1," + MAX_KEY + "}");
  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private Metadata() {}

  /**
   * The metadata of a request field: an object of strings, or null for none.
   *
   * @throws ApiProblem 400 {@code VALIDATION.metadata} naming what is wrong
   */
  public static Map<String, String> parse(JsonNode value) {
    if (value == null || value.isNull()) {
      return Map.of();
    }
    if (!value.isObject()) {
      throw ApiProblem.invalid("metadata", "metadata must be an object of strings");
    }
    if (value.size() > MAX_ENTRIES) {
      throw ApiProblem.invalid("metadata", "metadata holds at most " + MAX_ENTRIES + " entries, got " + value.size());
    }
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : value.properties()) {
      if (!KEY.matcher(e.getKey()).matches()) {
        throw ApiProblem.invalid("metadata", "metadata keys must be 1 to " + MAX_KEY
            + " letters, digits or _ . -");
      }
      JsonNode v = e.getValue();
      if (!v.isString()) {
        throw ApiProblem.invalid("metadata", "metadata." + e.getKey() + " must be a string");
      }
      if (v.stringValue().length() > MAX_VALUE) {
        throw ApiProblem.invalid("metadata", "metadata." + e.getKey() + " must be at most " + MAX_VALUE
            + " characters");
      }
      out.put(e.getKey(), v.stringValue());
    }
    String column = toColumn(out);
    if (column != null && column.length() > MAX_COLUMN) {
      // escaping (quotes, control characters) can make valid entries longer than the column
      throw ApiProblem.invalid("metadata", "metadata is " + column.length() + " characters as JSON; at most "
          + MAX_COLUMN + " are kept");
    }
    return Collections.unmodifiableMap(out);
  }

  /** The column value: JSON text, or null for no entries. */
  public static String toColumn(Map<String, String> metadata) {
    return metadata.isEmpty() ? null : MAPPER.writeValueAsString(new TreeMap<>(metadata));
  }

  /** The entries of a column value written by {@link #toColumn}. */
  public static Map<String, String> fromColumn(String column) {
    if (column == null || column.isEmpty()) {
      return Map.of();
    }
    try {
      Map<String, String> out = new TreeMap<>();
      for (Map.Entry<String, JsonNode> e : MAPPER.readTree(column).properties()) {
        out.put(e.getKey(), e.getValue().asString());
      }
      return Collections.unmodifiableMap(out);
    } catch (JacksonException e) {
      throw new IllegalStateException("a stored metadata column is not a JSON object: " + e.getOriginalMessage(), e);
    }
  }
}
