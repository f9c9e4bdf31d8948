package dev.idem.core;

/**
 * What a key is for: an HTTP method and route template ({@code POST /payments}) or a message type. Policies are
 * registered per operation.
 *
 * @param name 1 to 255 characters, no control characters
 */
public record Operation(String name) {
  public static final int MAX_LENGTH = 255;

  public Operation {
    Scope.Names.check("operation", name, MAX_LENGTH);
  }

  public static Operation of(String name) {
    return new Operation(name);
  }

  @Override
  public String toString() {
    return name;
  }
}
