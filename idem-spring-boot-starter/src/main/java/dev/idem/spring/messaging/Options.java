package dev.idem.spring.messaging;

import java.util.function.Consumer;
import java.util.function.Supplier;

/** Passes property values to a consumer's builder, naming the property when the builder refuses a value. */
final class Options {
  private Options() {}

  /** Calls {@code setter} with {@code value} unless it is null (the builder's default then holds). */
  static <T> void set(String property, T value, Consumer<T> setter) {
    if (value != null) {
      checked(property, () -> {
        setter.accept(value);
        return null;
      });
    }
  }

  /** Runs {@code step}; an {@link IllegalArgumentException} it throws becomes one that names {@code property}. */
  static <T> T checked(String property, Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new IllegalStateException(property + ": " + e.getMessage(), e);
    }
  }
}
