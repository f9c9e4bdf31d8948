package dev.idem.console.internal;

import static dev.idem.console.internal.ConsoleProblems.invalid;

import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.Scope;
import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.function.Function;

/** Query parameters, validated with problems that name the parameter. Stateless. */
public final class Params {
  private Params() {}

  /** The parameter, or null when absent or empty. */
  public static String optional(HttpServletRequest request, String name) {
    String value = request.getParameter(name);
    return value == null || value.isEmpty() ? null : value;
  }

  /** A whole number from {@code min} to {@code max}, or {@code fallback} when absent. */
  public static int integer(HttpServletRequest request, String name, int fallback, int min, int max) {
    String value = optional(request, name);
    if (value == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(value);
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw invalid(name, name + " must be " + min + " to " + max);
  }

  /** The record key of {@code scope}, {@code operation} and {@code key}, each validated as the engine would. */
  public static RecordKey recordKey(HttpServletRequest request) {
    return new RecordKey(valid("scope", request.getParameter("scope"), Scope::of),
        valid("operation", request.getParameter("operation"), Operation::of),
        valid("key", request.getParameter("key"), IdempotencyKey::of));
  }

  /** The required {@code version}: the record's version as the page showed it. */
  public static long version(HttpServletRequest request) {
    String version = optional(request, "version");
    if (version == null) {
      throw invalid("version", "version is required: the record's version as the console showed it");
    }
    try {
      return Long.parseLong(version);
    } catch (NumberFormatException e) {
      throw invalid("version", "version must be the record's version, a whole number");
    }
  }

  private static <T> T valid(String field, String value, Function<String, T> parse) {
    if (value == null) {
      throw invalid(field, field + " is required");
    }
    try {
      return parse.apply(value);
    } catch (IllegalArgumentException | IdemException e) {
      throw invalid(field, e.getMessage());
    }
  }

  /** The cursor that resumes a listing after {@code key}: its parts, base64url, separated by line feeds. */
  public static String cursor(RecordKey key) {
    String joined = key.scope().value() + '\n' + key.operation().name() + '\n' + key.key().value();
    return Base64.getUrlEncoder().withoutPadding().encodeToString(joined.getBytes(StandardCharsets.UTF_8));
  }

  /** The key of a cursor that {@link #cursor} made; 400 {@code VALIDATION.after} for anything else. */
  public static RecordKey after(String cursor) {
    try {
      String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split("\n", -1);
      if (parts.length != 3) {
        throw new IllegalArgumentException("expected 3 parts, got " + parts.length);
      }
      return RecordKey.of(parts[0], parts[1], parts[2]);
    } catch (RuntimeException e) {
      throw invalid("after", "after must be the next cursor of a previous page");
    }
  }

  /** An instant as ISO-8601 text, or null. */
  public static String time(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
