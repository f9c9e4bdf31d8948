package dev.idem.examples.payments.web;

import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import tools.jackson.databind.JsonNode;

/**
 * Type checks of request fields. A field of the wrong JSON type (a string where an integer is expected, a fraction,
 * an object) is a client mistake found before any idempotent execution starts, so the answer is never stored; an
 * absent or {@code null} field passes here and is judged by the domain's own validation. Stateless.
 */
public final class JsonFields {
  private JsonFields() {}

  /**
   * The text of a string field, or empty when absent or null.
   *
   * @throws ApiProblem 400 {@code VALIDATION.<field>} when present with another type
   */
  public static Optional<String> text(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return Optional.empty();
    }
    if (!v.isString()) {
      throw ApiProblem.invalid(field, field + " must be a string, got " + typeOf(v));
    }
    return Optional.of(v.stringValue());
  }

  /**
   * Checks that an integer field, when present, is a JSON integer (no fraction, no exponent). Its range is the
   * domain's to judge.
   *
   * @throws ApiProblem 400 {@code VALIDATION.<field>} when present with another type
   */
  public static void requireIntegerType(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v != null && !v.isNull() && !v.isIntegralNumber()) {
      throw ApiProblem.invalid(field, field + " must be an integer (minor units), got " + typeOf(v));
    }
  }

  /** The value of an integer field that fits in a long, or empty when absent, null or out of range. */
  public static OptionalLong integer(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(v.longValue());
  }

  /** Whether the field is present and not null. */
  public static boolean present(JsonNode body, String field) {
    JsonNode v = body.get(field);
    return v != null && !v.isNull();
  }

  private static String typeOf(JsonNode v) {
    if (v.isString()) {
      return "a string";
    }
    if (v.isIntegralNumber()) {
      return "an integer";
    }
    if (v.isNumber()) {
      return "a number with a fraction or exponent";
    }
    if (v.isBoolean()) {
      return "a boolean";
    }
    if (v.isArray()) {
      return "an array";
    }
    if (v.isObject()) {
      return "an object";
    }
    return v.getNodeType().name().toLowerCase(Locale.ROOT);
  }
}
