package dev.idem.retry.simulation;

import java.time.Duration;
import java.util.function.LongConsumer;

/**
 * A discrete-event simulation of clients racing to write one resource under optimistic concurrency, in virtual time
 * (no threads, no sleeping). Immutable and thread-safe; {@link #run()} returns the same {@link Result} every time for
 * the same configuration.
 *
 * <pre>{@code
 * Result r = ContentionSimulation.builder().clients(100).runs(100).seed(42).strategy(Strategy.FULL).build().run();
 * }</pre>
 *
 * <p>The model ({@link Model#IDEM}, the default). The server holds a version number. Each of the N clients must write
 * once: it reads the version (one network hop), then writes conditionally (one hop); the server applies the write if
 * the version is still the one the client read, otherwise it answers with a conflict. A hop takes |Normal(10 ms, sd 2
 * ms)| and the call takes effect at the server when the hop ends. All clients start their first read at time zero.
 * After its {@code k}-th conflict a client sleeps {@code strategy.backoff.delayNanos(k, previous sleep, random)} with
 * {@link #BASE} and {@link #CAP}, then reads again. A run ends when every client has written; its completion time is
 * the virtual time of the last write, and its calls are all reads plus all writes.
 *
 * <p>{@link Model#AWS_2015} follows the simulation published with the AWS Architecture Blog post "Exponential Backoff
 * and Jitter" (2015), with the same network, base and cap: every call is a request hop and a reply hop (the server
 * reads or applies when the request arrives), a run ends when the last client receives the reply to its applied write,
 * and the exponential term after the {@code n}-th conflict is {@code base * 2^n}. The published "calls" are
 * {@link Result#meanWrites()}.
 *
 * <p>The budget ({@link Strategy#IDEM_BUDGET}). One token bucket is shared by all clients of a run. Each client's
 * first read is a request ({@code onRequest}); each conflict is a failure ({@code onFailure}); each applied write a
 * success ({@code onSuccess}). When a backoff ends, the client asks {@code tryAcquireRetry()}. If the budget refuses,
 * nothing is sent: the refusal counts as one refused retry, the client draws its next backoff (the retry number still
 * grows) and sleeps again; when that sleep ends it sends a fresh request ({@code onRequest}, not subject to the
 * budget), as an application would resubmit an operation the retry layer gave up on. So a budget can refuse a client
 * at most once in a row, and every client completes. (Without that rule no client would ever finish once the bucket
 * drains, since a token bucket refills only on successes.)
 *
 * <p>Randomness. Run {@code i} of a configuration with {@code n} clients uses a {@link java.util.SplittableRandom}
 * seeded from (seed, n, i) alone, so strategies are compared on common random numbers, and results do not depend on
 * the order or the threads in which runs are computed.
 */
public final class ContentionSimulation {
  /** The smallest backoff unit: 5 ms. */
  public static final Duration BASE = Duration.ofMillis(5);
  /** The largest backoff: 2,000 ms. */
  public static final Duration CAP = Duration.ofMillis(2_000);

  static final double HOP_MEAN_NANOS = 10_000_000;
  static final double HOP_SD_NANOS = 2_000_000;

  private final Model model;
  private final int clients;
  private final int runs;
  private final long seed;
  private final Strategy strategy;

  private ContentionSimulation(Builder b) {
    this.model = b.model;
    this.clients = b.clients;
    this.runs = b.runs;
    this.seed = b.seed;
    this.strategy = b.strategy;
  }

  /** A builder with {@link Model#IDEM}, 1 client, 1 run, seed 0 and no strategy; a strategy must be set. */
  public static Builder builder() {
    return new Builder();
  }

  /** Runs every run of this configuration and averages them. */
  public Result run() {
    RunOutcome[] outcomes = new RunOutcome[runs];
    for (int i = 0; i < runs; i++) {
      outcomes[i] = runOnce(i, null);
    }
    return summarize(outcomes);
  }

  public Model model() {
    return model;
  }

  public int clients() {
    return clients;
  }

  public int runs() {
    return runs;
  }

  public long seed() {
    return seed;
  }

  public Strategy strategy() {
    return strategy;
  }

  /** Run number {@code run} on its own, telling {@code delayObserver} (when not null) every backoff drawn. */
  RunOutcome runOnce(int run, LongConsumer delayObserver) {
    return new ContentionRun(model, clients, strategy.backoff(model, BASE, CAP), strategy.newBudget(),
        runSeed(seed, clients, run), delayObserver).run();
  }

  static Result summarize(RunOutcome[] outcomes) {
    double completion = 0;
    double calls = 0;
    double writes = 0;
    double refused = 0;
    for (RunOutcome o : outcomes) {
      completion += o.completionNanos() / 1e6;
      calls += o.calls();
      writes += o.writes();
      refused += o.refusedRetries();
    }
    int n = outcomes.length;
    return new Result(completion / n, calls / n, writes / n, refused / n);
  }

  static long runSeed(long seed, int clients, int run) {
    long x = mix(seed);
    x = mix(x ^ clients);
    return mix(x + run * 0x9E3779B97F4A7C15L);
  }

  /** The SplitMix64 finaliser. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Mutable, not thread-safe; {@link #build()} validates and copies. */
  public static final class Builder {
    private Model model = Model.IDEM;
    private int clients = 1;
    private int runs = 1;
    private long seed;
    private Strategy strategy;

    private Builder() {}

    /** The conventions to follow; {@link Model#IDEM} unless set. */
    public Builder model(Model model) {
      this.model = model;
      return this;
    }

    /** How many clients race, at least 1. */
    public Builder clients(int clients) {
      this.clients = clients;
      return this;
    }

    /** How many independent runs to average, at least 1. */
    public Builder runs(int runs) {
      this.runs = runs;
      return this;
    }

    /** The seed all runs derive theirs from. */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    public Builder strategy(Strategy strategy) {
      this.strategy = strategy;
      return this;
    }

    /** @throws IllegalArgumentException naming the parameter and its bad value */
    public ContentionSimulation build() {
      if (model == null) {
        throw new IllegalArgumentException("model must not be null; known models: " + Model.ids());
      }
      if (clients < 1) {
        throw new IllegalArgumentException("clients must be at least 1, was " + clients);
      }
      if (runs < 1) {
        throw new IllegalArgumentException("runs must be at least 1, was " + runs);
      }
      if (strategy == null) {
        throw new IllegalArgumentException("strategy must be set; known strategies: " + Strategy.ids());
      }
      return new ContentionSimulation(this);
    }
  }
}
