package dev.idem.retry.simulation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.IntStream;

/**
 * A table of {@link ContentionSimulation} results: every client count in {@code from..to} by {@code step}, for each of
 * several strategies. Immutable and thread-safe.
 *
 * <pre>{@code
 * List<Sweep.Row> rows = Sweep.builder().clients(10, 190, 10).runs(100).seed(42).build().run();
 * }</pre>
 *
 * <p>{@link #run()} computes runs in parallel on the common fork-join pool; each run has its own seed (see
 * {@link ContentionSimulation}) and averages are summed in run order, so the rows are the same on any machine and at
 * any parallelism.
 */
public final class Sweep {
  /** One line of the table: a client count, a strategy, and its averages. */
  public record Row(int clients, Strategy strategy, Result result) {}

  private final Model model;
  private final int from;
  private final int to;
  private final int step;
  private final List<Strategy> strategies;
  private final int runs;
  private final long seed;

  private Sweep(Builder b) {
    this.model = b.model;
    this.from = b.from;
    this.to = b.to;
    this.step = b.step;
    this.strategies = List.copyOf(b.strategies);
    this.runs = b.runs;
    this.seed = b.seed;
  }

  /** A builder for {@link Model#IDEM}, clients 10..190 by 10, all strategies, 100 runs, seed 42. */
  public static Builder builder() {
    return new Builder();
  }

  /** The client counts of this sweep, ascending. */
  public List<Integer> clientCounts() {
    List<Integer> counts = new ArrayList<>();
    for (long n = from; n <= to; n += step) {
      counts.add((int) n);
    }
    return counts;
  }

  public Model model() {
    return model;
  }

  public List<Strategy> strategies() {
    return strategies;
  }

  /** The rows, ordered by client count, then by strategy in the order given to the builder. */
  public List<Row> run() {
    List<ContentionSimulation> cells = new ArrayList<>();
    for (int n : clientCounts()) {
      for (Strategy s : strategies) {
        cells.add(ContentionSimulation.builder().model(model).clients(n).runs(runs).seed(seed).strategy(s).build());
      }
    }
    RunOutcome[] outcomes = IntStream.range(0, cells.size() * runs).parallel()
        .mapToObj(i -> cells.get(i / runs).runOnce(i % runs, null))
        .toArray(RunOutcome[]::new);
    List<Row> rows = new ArrayList<>(cells.size());
    for (int c = 0; c < cells.size(); c++) {
      ContentionSimulation cell = cells.get(c);
      Result result = ContentionSimulation.summarize(Arrays.copyOfRange(outcomes, c * runs, (c + 1) * runs));
      rows.add(new Row(cell.clients(), cell.strategy(), result));
    }
    return rows;
  }

  /** Mutable, not thread-safe; {@link #build()} validates and copies. */
  public static final class Builder {
    private Model model = Model.IDEM;
    private int from = 10;
    private int to = 190;
    private int step = 10;
    private List<Strategy> strategies = List.of(Strategy.values());
    private int runs = 100;
    private long seed = 42;

    private Builder() {}

    /** The conventions every cell follows; {@link Model#IDEM} unless set. */
    public Builder model(Model model) {
      this.model = model;
      return this;
    }

    /** Client counts {@code from, from + step, ...} up to and including {@code to} when the steps land on it. */
    public Builder clients(int from, int to, int step) {
      this.from = from;
      this.to = to;
      this.step = step;
      return this;
    }

    /** The strategies, in the order rows list them; no duplicates. */
    public Builder strategies(List<Strategy> strategies) {
      this.strategies = new ArrayList<>(strategies);
      return this;
    }

    public Builder strategies(Strategy... strategies) {
      return strategies(Arrays.asList(strategies));
    }

    /** Runs averaged per row, at least 1. */
    public Builder runs(int runs) {
      this.runs = runs;
      return this;
    }

    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /** @throws IllegalArgumentException naming the parameter and its bad value */
    public Sweep build() {
      if (model == null) {
        throw new IllegalArgumentException("model must not be null; known models: " + Model.ids());
      }
      if (from < 1) {
        throw new IllegalArgumentException("clients from must be at least 1, was " + from);
      }
      if (to < from) {
        throw new IllegalArgumentException("clients to must be at least from (" + from + "), was " + to);
      }
      if (step < 1) {
        throw new IllegalArgumentException("clients step must be at least 1, was " + step);
      }
      if (runs < 1) {
        throw new IllegalArgumentException("runs must be at least 1, was " + runs);
      }
      if (strategies.isEmpty()) {
        throw new IllegalArgumentException("strategies must not be empty");
      }
      if (strategies.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException("strategies must not contain null: " + strategies);
      }
      if (strategies.stream().distinct().count() != strategies.size()) {
        throw new IllegalArgumentException("strategies must not repeat: " + strategies);
      }
      long simulatedRuns = ((long) (to - from) / step + 1) * strategies.size() * runs;
      if (simulatedRuns > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("client counts x strategies x runs must be at most " + Integer.MAX_VALUE
            + ", was " + simulatedRuns);
      }
      return new Sweep(this);
    }
  }
}
