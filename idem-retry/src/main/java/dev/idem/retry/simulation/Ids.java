package dev.idem.retry.simulation;

import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Finds the constants of {@link Strategy} and {@link Model} by the ids the command line uses. */
final class Ids {
  private Ids() {}

  /**
   * The constant whose id is {@code wanted}.
   *
   * @throws IllegalArgumentException naming the unknown id and the known ones, for example "unknown model 'x'; known
   *     models: idem,aws-2015"
   */
  static <E> E find(E[] constants, Function<E, String> id, String wanted, String kind, String kinds) {
    for (E e : constants) {
      if (id.apply(e).equals(wanted)) {
        return e;
      }
    }
    throw new IllegalArgumentException("unknown " + kind + " '" + wanted + "'; known " + kinds + ": "
        + join(constants, id));
  }

  /** The ids, comma-separated, in the order given. */
  static <E> String join(E[] constants, Function<E, String> id) {
    return Arrays.stream(constants).map(id).collect(Collectors.joining(","));
  }
}
