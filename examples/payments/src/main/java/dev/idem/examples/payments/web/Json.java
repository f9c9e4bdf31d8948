package dev.idem.examples.payments.web;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads request bodies into JSON trees and writes response documents, with the service's own settings (duplicate
 * members and trailing content refused, and text the databases cannot store: see {@link StorableText}), so that the
 * bytes of a response do not depend on Spring's mapper. Thread-safe.
 */
@Component
public final class Json {
  private final JsonMapper mapper = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();

  /**
   * The body as a JSON object.
   *
   * @throws ApiProblem 400 {@code VALIDATION.body} when the body is empty, not JSON, or not an object, or a member
   *     name holds text the databases cannot store; 400 {@code VALIDATION.<member>} when a string anywhere in the
   *     value of a top-level member does ({@link StorableText})
   */
  public JsonNode object(byte[] body) {
    if (body.length == 0) {
      throw ApiProblem.invalid("body", "the request body is empty; send a JSON object");
    }
    JsonNode node;
    try {
      node = mapper.readTree(body);
    } catch (JacksonException e) {
      throw ApiProblem.invalid("body", "the request body is not valid JSON: " + e.getOriginalMessage());
    }
    if (node == null || !node.isObject()) {
      throw ApiProblem.invalid("body", "the request body must be a JSON object");
    }
    for (Map.Entry<String, JsonNode> member : node.properties()) {
      String name = member.getKey();
      int at = StorableText.firstUnstorable(name);
      if (at >= 0) {
        throw ApiProblem.invalid("body", "a member name holds " + StorableText.describe(name, at));
      }
      requireStorable(name, name, member.getValue());
    }
    return node;
  }

  /** Refuses a string, or a member name, anywhere in {@code value} that holds text the databases cannot store. */
  private static void requireStorable(String field, String path, JsonNode value) {
    if (value.isString()) {
      String text = value.stringValue();
      int at = StorableText.firstUnstorable(text);
      if (at >= 0) {
        throw ApiProblem.invalid(field, path + " holds " + StorableText.describe(text, at));
      }
    } else if (value.isObject()) {
      for (Map.Entry<String, JsonNode> member : value.properties()) {
        String name = member.getKey();
        int at = StorableText.firstUnstorable(name);
        if (at >= 0) {
          throw ApiProblem.invalid(field, "a member name in " + path + " holds " + StorableText.describe(name, at));
        }
        requireStorable(field, path + "." + name, member.getValue());
      }
    } else if (value.isArray()) {
      for (int i = 0; i < value.size(); i++) {
        requireStorable(field, path + "[" + i + "]", value.get(i));
      }
    }
  }

  /** The value as JSON bytes (maps keep their insertion order). */
  public byte[] write(Object value) {
    return mapper.writeValueAsBytes(value);
  }

  /** A JSON document of name/value pairs, in the given order; {@code null} values are written as {@code null}. */
  public static Map<String, Object> document(Object... namesAndValues) {
    if (namesAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("names and values must come in pairs");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      out.put((String) namesAndValues[i], namesAndValues[i + 1]);
    }
    return out;
  }

  /** {@code {"<name>": [items]}}. */
  public static Map<String, Object> list(String name, List<?> items) {
    return document(name, items);
  }
}
