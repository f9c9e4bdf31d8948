package dev.idem.core.internal.json;

/**
 * The JSON {@code null} in trees made by {@link JsonParser}: a sentinel rather than Java {@code null}, so that a
 * member whose value is null ({@code map.get(name) == JsonNull.INSTANCE}) is told apart from a missing member
 * ({@code map.get(name) == null}). {@link JsonWriter} accepts both this and Java {@code null}. Immutable and
 * thread-safe.
 */
public enum JsonNull {
  INSTANCE;

  @Override
  public String toString() {
    return "null";
  }
}
