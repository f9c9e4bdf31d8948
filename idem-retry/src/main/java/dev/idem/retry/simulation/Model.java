package dev.idem.retry.simulation;

/**
 * The conventions a {@link ContentionSimulation} follows: Idem's own, or those of the simulation published with the AWS
 * Architecture Blog post "Exponential Backoff and Jitter" (2015). Both share the clients, the server, the network
 * (each hop |Normal(10 ms, sd 2 ms)|), base 5 ms and cap 2,000 ms; {@code docs/simulation.md} lists the differences.
 */
public enum Model {
  /**
   * Idem's conventions: a call takes effect at the server when its one hop ends, and the client learns the answer at
   * that moment; after the {@code k}-th conflict the exponential term is {@code base * 2^(k-1)}, as in
   * {@link dev.idem.retry.Backoff}.
   */
  IDEM("idem"),
  /**
   * The published conventions: a call is a request hop to the server and a reply hop back; after the client's
   * {@code n}-th failed write, {@code n} from 1, the exponential term is {@code base * 2^n}, so the first sleep without
   * jitter is {@code 2 * base}; decorrelated jitter starts from {@code sleep = base}; the published "calls" are the
   * writes ({@link Result#meanWrites()}); a run ends when the last client receives the reply to its applied write.
   * Strategies {@link Strategy#IDEM} and {@link Strategy#IDEM_BUDGET} keep Idem's own backoff, so that the table shows
   * where Idem's default stands under these conventions.
   */
  AWS_2015("aws-2015");

  private final String id;

  Model(String id) {
    this.id = id;
  }

  /** The name used on the command line, for example {@code aws-2015}. */
  public String id() {
    return id;
  }

  /**
   * The model with this {@link #id() id}.
   *
   * @throws IllegalArgumentException naming the unknown id and the known ones
   */
  public static Model ofId(String id) {
    return Ids.find(values(), Model::id, id, "model", "models");
  }

  /** The ids of all models, comma-separated, in declaration order. */
  public static String ids() {
    return Ids.join(values(), Model::id);
  }

  /** Whether every answer travels back to the client on a hop of its own. */
  boolean repliesTakeAHop() {
    return this == AWS_2015;
  }

  @Override
  public String toString() {
    return id;
  }
}
