package dev.idem.cli;

import dev.idem.retry.simulation.ContentionSimulation;
import dev.idem.retry.simulation.Model;
import dev.idem.retry.simulation.Strategy;
import dev.idem.retry.simulation.Sweep;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.geom.AffineTransform;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/**
 * {@code idem simulate}: runs the contention simulator ({@link Sweep}) over a range of client counts and strategies, in
 * Idem's model or the published AWS one ({@code --model}), and writes CSV
 * {@code clients,strategy,mean_completion_ms,mean_calls,mean_writes} to standard output, one row per client count and
 * strategy, numbers with one decimal. With {@code --png FILE} it also draws calls (writes only under
 * {@code aws-2015}, as published) and completion time against clients, one line per strategy (java.awt, headless).
 * The output is the same bytes for the same options.
 */
final class SimulateCommand implements Command {
  private static final String USAGE = String.join("\n",
      "usage: idem simulate [--model NAME] [--clients FROM:TO:STEP] [--runs N] [--seed S] [--strategy NAME,...]",
      "                     [--png FILE]",
      "",
      "Simulates N clients racing to write one resource under optimistic concurrency (read the version, then",
      "write if it is unchanged; back off on a conflict), in virtual time, and prints CSV:",
      "clients,strategy,mean_completion_ms,mean_calls,mean_writes (calls are reads plus writes).",
      "The same options give the same bytes. See docs/simulation.md.",
      "",
      "options:",
      "  --model NAME            idem (default): Idem's conventions; aws-2015: those of the simulation published with",
      "                          the AWS post \"Exponential Backoff and Jitter\" (a reply hop per call, exponent",
      "                          base * 2^n from n = 1; its \"calls\" are our mean_writes)",
      "  --clients FROM:TO:STEP  client counts, inclusive (default 10:190:10); a single number N means N:N:1",
      "  --runs N                runs averaged per row (default 100)",
      "  --seed S                seed of all runs, a 64-bit integer (default 42)",
      "  --strategy NAMES        comma-separated, in output order (default all): " + Strategy.ids(),
      "  --png FILE              also draw calls and completion time against clients into this PNG file",
      "  -h, --help              print this help",
      "",
      "exit status: 0 done; 1 the PNG could not be written (the CSV has been printed); 2 bad options.",
      "");

  private static final int MAX_CLIENTS = 100_000;
  private static final int MAX_RUNS = 100_000;

  @Override
  public String name() {
    return "simulate";
  }

  @Override
  public String summary() {
    return "simulate retry strategies under write contention (CSV, optionally a PNG chart)";
  }

  @Override
  public String usage() {
    return USAGE;
  }

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    Model model = Model.IDEM;
    int[] clients = {10, 190, 10};
    int runs = 100;
    long seed = 42;
    List<Strategy> strategies = List.of(Strategy.values());
    Path png = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      String option = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        option = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      switch (option) {
        case "-h":
        case "--help":
          out.print(USAGE);
          return Main.OK;
        case "--model":
        case "--clients":
        case "--runs":
        case "--seed":
        case "--strategy":
        case "--png":
          if (value == null) {
            if (i + 1 >= args.size()) {
              return usageError(err, option + " needs a value");
            }
            value = args.get(++i);
          }
          try {
            switch (option) {
              case "--model":
                model = Model.ofId(value.trim());
                break;
              case "--clients":
                clients = parseRange(value);
                break;
              case "--runs":
                runs = parseCount("--runs", value, MAX_RUNS);
                break;
              case "--seed":
                seed = parseSeed(value);
                break;
              case "--strategy":
                strategies = parseStrategies(value);
                break;
              default:
                if (value.isEmpty()) {
                  throw new IllegalArgumentException("--png needs a file name");
                }
                png = Path.of(value);
                break;
            }
          } catch (IllegalArgumentException e) {
            return usageError(err, e.getMessage());
          }
          break;
        default:
          return usageError(err,
              arg.startsWith("-") ? "unknown option '" + arg + "'" : "unexpected argument '" + arg + "'");
      }
    }
    Sweep sweep = Sweep.builder().model(model).clients(clients[0], clients[1], clients[2]).strategies(strategies)
        .runs(runs).seed(seed).build();
    List<Sweep.Row> rows = sweep.run();
    out.print(csv(rows));
    out.flush();
    if (png != null) {
      try {
        Chart.write(rows, sweep, runs, seed, png);
      } catch (IOException | RuntimeException e) {
        err.println("idem simulate: cannot write PNG '" + png + "': " + e);
        return Main.FAILED;
      }
    }
    return Main.OK;
  }

  static String csv(List<Sweep.Row> rows) {
    StringBuilder sb = new StringBuilder("clients,strategy,mean_completion_ms,mean_calls,mean_writes\n");
    for (Sweep.Row r : rows) {
      sb.append(String.format(Locale.ROOT, "%d,%s,%.1f,%.1f,%.1f%n", r.clients(), r.strategy().id(),
          r.result().meanCompletionMillis(), r.result().meanCalls(), r.result().meanWrites()).replace("\r", ""));
    }
    return sb.toString();
  }

  private static int usageError(PrintStream err, String problem) {
    err.println("idem simulate: " + problem);
    err.print(USAGE);
    return Main.USAGE;
  }

  private static int[] parseRange(String value) {
    String[] parts = value.split(":", -1);
    if (parts.length != 1 && parts.length != 3) {
      throw new IllegalArgumentException("--clients must be FROM:TO:STEP or N, was '" + value + "'");
    }
    int from = parseCount("--clients FROM", parts[0], MAX_CLIENTS);
    if (parts.length == 1) {
      return new int[] {from, from, 1};
    }
    int to = parseCount("--clients TO", parts[1], MAX_CLIENTS);
    int step = parseCount("--clients STEP", parts[2], MAX_CLIENTS);
    if (to < from) {
      throw new IllegalArgumentException(
          "--clients TO (" + to + ") is less than FROM (" + from + ") in '" + value + "'");
    }
    return new int[] {from, to, step};
  }

  private static int parseCount(String what, String value, int max) {
    int n;
    try {
      n = Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + " must be a whole number, was '" + value + "'");
    }
    if (n < 1 || n > max) {
      throw new IllegalArgumentException(what + " must be between 1 and " + max + ", was " + n);
    }
    return n;
  }

  private static long parseSeed(String value) {
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--seed must be a 64-bit integer, was '" + value + "'");
    }
  }

  private static List<Strategy> parseStrategies(String value) {
    List<Strategy> strategies = new ArrayList<>();
    for (String name : value.split(",", -1)) {
      String id = name.trim();
      if (id.isEmpty()) {
        throw new IllegalArgumentException("--strategy has an empty name in '" + value + "'; known strategies: "
            + Strategy.ids());
      }
      Strategy s = Strategy.ofId(id);
      if (strategies.contains(s)) {
        throw new IllegalArgumentException("--strategy lists '" + id + "' twice");
      }
      strategies.add(s);
    }
    return strategies;
  }

  /** Draws the two panels (calls, completion time) into one PNG. */
  static final class Chart {
    private static final int PANEL_WIDTH = 760;
    private static final int HEIGHT = 620;
    private static final Color[] COLORS = {
        new Color(0xd62728), new Color(0x7f7f7f), new Color(0x1f77b4), new Color(0x2ca02c), new Color(0x9467bd),
        new Color(0xff7f0e), new Color(0x17becf)};
    private static final Stroke[] STROKES = {
        new BasicStroke(2f), new BasicStroke(2f), new BasicStroke(2f), new BasicStroke(2f), new BasicStroke(2f),
        new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f, new float[] {9f, 6f}, 0f),
        new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f, new float[] {3f, 4f}, 0f)};

    private Chart() {}

    static void write(List<Sweep.Row> rows, Sweep sweep, int runs, long seed, Path file) throws IOException {
      System.setProperty("java.awt.headless", "true");
      BufferedImage image = new BufferedImage(2 * PANEL_WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
      Graphics2D g = image.createGraphics();
      try {
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        String subtitle = String.format(Locale.ROOT, "%d runs per point, seed %d, base %d ms, cap %,d ms", runs, seed,
            ContentionSimulation.BASE.toMillis(), ContentionSimulation.CAP.toMillis());
        if (sweep.model() == Model.IDEM) {
          panel(g, 0, rows, sweep, "Calls (reads + writes) per run", "mean calls", false,
              r -> r.result().meanCalls(), subtitle);
          panel(g, PANEL_WIDTH, rows, sweep, "Time until the last client has written",
              "mean completion time (ms, log scale)", true, r -> r.result().meanCompletionMillis(), subtitle);
        } else {
          subtitle = "model " + sweep.model().id() + ", " + subtitle;
          panel(g, 0, rows, sweep, "Writes per run (the published \"calls\")", "mean writes", false,
              r -> r.result().meanWrites(), subtitle);
          panel(g, PANEL_WIDTH, rows, sweep, "Time until the last client has its reply",
              "mean completion time (ms, log scale)", true, r -> r.result().meanCompletionMillis(), subtitle);
        }
      } finally {
        g.dispose();
      }
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null && !Files.isDirectory(parent)) {
        throw new IOException("no such directory: " + parent);
      }
      if (!ImageIO.write(image, "png", file.toFile())) {
        throw new IOException("no PNG writer available");
      }
    }

    private static void panel(Graphics2D g, int x0, List<Sweep.Row> rows, Sweep sweep, String title, String yLabel,
        boolean log, ToDoubleFunction<Sweep.Row> value, String subtitle) {
      int left = x0 + 90;
      int right = x0 + PANEL_WIDTH - 30;
      int top = 70;
      int bottom = HEIGHT - 150;
      List<Integer> counts = sweep.clientCounts();
      double xMin = counts.get(0);
      double xMax = counts.get(counts.size() - 1);
      if (xMax == xMin) {
        xMin -= 1;
        xMax += 1;
      }
      double yMin = Double.POSITIVE_INFINITY;
      double yMax = 0;
      for (Sweep.Row r : rows) {
        yMin = Math.min(yMin, value.applyAsDouble(r));
        yMax = Math.max(yMax, value.applyAsDouble(r));
      }
      List<Double> ticks = new ArrayList<>();
      if (log) {
        yMin = Math.pow(10, Math.floor(Math.log10(Math.max(yMin, 1e-3))));
        yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(yMax, yMin * 10))));
        for (double decade = yMin; decade <= yMax * 1.0001; decade *= 10) {
          for (double m : new double[] {1, 2, 5}) {
            if (m * decade <= yMax * 1.0001) {
              ticks.add(m * decade);
            }
          }
        }
      } else {
        double yStep = niceStep(yMax / 6);
        yMin = 0;
        yMax = Math.max(yStep, Math.ceil(yMax / yStep) * yStep);
        for (int k = 0; k * yStep <= yMax + yStep / 2; k++) {
          ticks.add(k * yStep);
        }
      }
      Scale scale = new Scale(log, yMin, yMax, top, bottom);

      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 17));
      g.setColor(Color.BLACK);
      centered(g, title, (left + right) / 2, 30);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      g.setColor(Color.DARK_GRAY);
      centered(g, subtitle, (left + right) / 2, 50);

      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      FontMetrics fm = g.getFontMetrics();
      for (double y : ticks) {
        int py = (int) Math.round(scale.py(y));
        g.setColor(new Color(0xe6e6e6));
        g.drawLine(left, py, right, py);
        g.setColor(Color.BLACK);
        String label = String.format(Locale.ROOT, y > 0 && y < 1 ? "%,.3g" : "%,.0f", y);
        g.drawString(label, left - 8 - fm.stringWidth(label), py + fm.getAscent() / 2 - 1);
      }
      int labelEvery = Math.max(1, (int) Math.ceil(counts.size() / 10.0));
      for (int i = 0; i < counts.size(); i++) {
        int px = px(counts.get(i), xMin, xMax, left, right);
        g.setColor(new Color(0xf0f0f0));
        g.drawLine(px, top, px, bottom);
        g.setColor(Color.BLACK);
        g.drawLine(px, bottom, px, bottom + 5);
        if (i % labelEvery == 0 || i == counts.size() - 1) {
          centered(g, String.valueOf(counts.get(i)), px, bottom + 20);
        }
      }
      g.setColor(Color.BLACK);
      g.setStroke(new BasicStroke(1.2f));
      g.drawLine(left, bottom, right, bottom);
      g.drawLine(left, top, left, bottom);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
      centered(g, "clients", (left + right) / 2, bottom + 42);
      AffineTransform saved = g.getTransform();
      g.rotate(-Math.PI / 2);
      centered(g, yLabel, -(top + bottom) / 2, x0 + 24);
      g.setTransform(saved);

      List<Strategy> strategies = sweep.strategies();
      for (int s = 0; s < strategies.size(); s++) {
        Strategy strategy = strategies.get(s);
        Path2D.Double line = new Path2D.Double();
        boolean first = true;
        for (Sweep.Row r : rows) {
          if (r.strategy() != strategy) {
            continue;
          }
          double px = left + (right - left) * (r.clients() - xMin) / (xMax - xMin);
          double py = scale.py(value.applyAsDouble(r));
          if (first) {
            line.moveTo(px, py);
            first = false;
          } else {
            line.lineTo(px, py);
          }
          g.setColor(color(strategy));
          g.fillOval((int) Math.round(px) - 3, (int) Math.round(py) - 3, 7, 7);
        }
        g.setColor(color(strategy));
        g.setStroke(STROKES[strategy.ordinal() % STROKES.length]);
        g.draw(line);
      }
      g.setStroke(new BasicStroke(1f));

      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
      fm = g.getFontMetrics();
      int columns = 4;
      int cellWidth = (right - left) / columns;
      for (int s = 0; s < strategies.size(); s++) {
        Strategy strategy = strategies.get(s);
        int lx = left + (s % columns) * cellWidth;
        int ly = bottom + 75 + (s / columns) * 24;
        g.setColor(color(strategy));
        g.setStroke(STROKES[strategy.ordinal() % STROKES.length]);
        g.drawLine(lx, ly - 5, lx + 30, ly - 5);
        g.fillOval(lx + 12, ly - 8, 7, 7);
        g.setStroke(new BasicStroke(1f));
        g.setColor(Color.BLACK);
        g.drawString(strategy.id(), lx + 38, ly - 5 + fm.getAscent() / 2 - 1);
      }
    }

    /** Maps a value to a pixel row, linearly from zero or logarithmically between two powers of ten. */
    private record Scale(boolean log, double min, double max, int top, int bottom) {
      double py(double y) {
        double fraction = log
            ? (Math.log10(Math.max(y, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
            : (y - min) / (max - min);
        return bottom - (bottom - top) * fraction;
      }
    }

    private static Color color(Strategy strategy) {
      return COLORS[strategy.ordinal() % COLORS.length];
    }

    private static int px(double x, double xMin, double xMax, int left, int right) {
      return (int) Math.round(left + (right - left) * (x - xMin) / (xMax - xMin));
    }

    private static void centered(Graphics2D g, String text, int x, int baseline) {
      g.drawString(text, x - g.getFontMetrics().stringWidth(text) / 2, baseline);
    }

    /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
    private static double niceStep(double raw) {
      if (raw <= 0) {
        return 1;
      }
      double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
      for (double m : new double[] {1, 2, 5, 10}) {
        if (m * magnitude >= raw) {
          return m * magnitude;
        }
      }
      return 10 * magnitude;
    }
  }
}
