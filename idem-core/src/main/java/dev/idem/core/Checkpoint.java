package dev.idem.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What a phased operation carries from one phase to the next: a small map of named text values, stored with the
 * record at each recovery point. Immutable.
 *
 * <p>The completer resumes an operation from its checkpoint alone (it does not have the original request), so the
 * first phase must put here everything the later phases need: the payment id, the amount, the provider's charge id.
 */
public final class Checkpoint {
  private static final Checkpoint EMPTY = new Checkpoint(Map.of());

  private final Map<String, String> values;

  private Checkpoint(Map<String, String> values) {
    this.values = values;
  }

  public static Checkpoint empty() {
    return EMPTY;
  }

  /** The most values a checkpoint holds. */
  public static final int MAX_VALUES = 64;
  /** The longest name, in characters. */
  public static final int MAX_NAME = 64;
  /** The longest value, in characters. */
  public static final int MAX_VALUE = 4096;

  /**
   * A checkpoint of these values.
   *
   * @throws IllegalArgumentException past {@value #MAX_VALUES} values, a name past {@value #MAX_NAME} characters or
   *     a value past {@value #MAX_VALUE}: a checkpoint is stored with every phase, so it holds ids, not documents
   */
  public static Checkpoint of(Map<String, String> values) {
    Objects.requireNonNull(values, "values");
    if (values.size() > MAX_VALUES) {
      throw new IllegalArgumentException("a checkpoint holds at most " + MAX_VALUES + " values, got " + values.size());
    }
    values.forEach((name, value) -> {
      Objects.requireNonNull(name, "checkpoint name");
      Objects.requireNonNull(value, "checkpoint value of '" + name + "'");
      if (name.isEmpty() || name.length() > MAX_NAME) {
        throw new IllegalArgumentException("checkpoint name must be 1 to " + MAX_NAME + " characters, got '" + name
            + "'");
      }
      if (value.length() > MAX_VALUE) {
        throw new IllegalArgumentException("checkpoint value '" + name + "' is " + value.length()
            + " characters; the limit is " + MAX_VALUE + " (keep ids in checkpoints, not documents)");
      }
    });
    return values.isEmpty() ? EMPTY : new Checkpoint(Map.copyOf(new TreeMap<>(values)));
  }

  /** A checkpoint with one more value (or a replaced one). */
  public Checkpoint with(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    Map<String, String> copy = new LinkedHashMap<>(values);
    copy.put(name, value);
    return of(copy);
  }

  /** The value, or {@code null} when absent. */
  public String get(String name) {
    return values.get(name);
  }

  /**
   * The value.
   *
   * @throws IllegalStateException when absent: a phase expected an earlier phase to have recorded it
   */
  public String require(String name) {
    String v = values.get(name);
    if (v == null) {
      throw new IllegalStateException("checkpoint has no value '" + name + "'; it holds " + values.keySet());
    }
    return v;
  }

  public boolean isEmpty() {
    return values.isEmpty();
  }

  /** Name to value, sorted by name. Unmodifiable. */
  public Map<String, String> values() {
    return new TreeMap<>(values);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Checkpoint && ((Checkpoint) o).values.equals(values);
  }

  @Override
  public int hashCode() {
    return values.hashCode();
  }

  @Override
  public String toString() {
    return "Checkpoint" + values();
  }
}
