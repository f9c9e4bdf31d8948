package dev.idem.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings of one {@code idem chaos} run, parsed and checked from the command line before anything starts.
 * Immutable.
 *
 * @param killEvery time between two kill -9 of an instance, or null for none
 * @param pgRestartAt when PostgreSQL restarts, counted from the start of the workload, or null for never
 * @param refusalRate the fraction of charges and refunds the provider refuses for good (422 {@code PROVIDER.refused})
 * @param providerDown how long the provider stays down (every call and look-up fails), from a quarter of the
 *     workload on, or null for never: long enough, records pass their resume cap and become uncertain
 */
record ChaosSettings(
    String preset,
    Duration duration,
    double rate,
    int instances,
    long seed,
    String db,
    Duration killEvery,
    Duration pgRestartAt,
    double faultRate,
    double refusalRate,
    Path report,
    boolean keepDatabase,
    Duration providerDown) {

  static final String DEFAULT_DB = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
  static final String H2 = "h2";
  static final int MAX_INSTANCES = 8;
  static final double MAX_RATE = 500;
  static final double MAX_FAULT_RATE = 0.9;
  static final double MAX_REFUSAL_RATE = 0.9;
  static final Duration MIN_DURATION = Duration.ofSeconds(5);
  static final Duration MAX_DURATION = Duration.ofHours(24);
  static final Duration MIN_KILL_EVERY = Duration.ofSeconds(5);
  static final Duration MIN_PROVIDER_DOWN = Duration.ofSeconds(5);
  /** The resume cap of the instances when the provider goes down: few attempts, so that records pass it. */
  static final int OUTAGE_RESUME_CAP = 3;
  private static final Pattern PG_URL = Pattern.compile("jdbc:postgresql://([^/?]+)/([A-Za-z0-9_]+)(\\?.*)?");
  private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h)?");

  /** A bad command line: the message names the flag and the value. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  boolean isH2() {
    return db.equals(H2);
  }

  /** When the provider goes down, counted from the start of the workload: a quarter of it in. */
  Duration providerDownAt() {
    return duration.dividedBy(4);
  }

  /**
   * Parses the arguments after {@code chaos}. The preset (default {@code short}) gives every value that no flag sets,
   * whatever the order of the flags.
   *
   * @throws UsageException for an unknown flag, a missing or bad value, or values that do not fit together
   */
  static ChaosSettings parse(List<String> args) throws UsageException {
    List<String[]> flags = new ArrayList<>();
    String preset = "short";
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String name = a;
      String value;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        name = a.substring(0, eq);
        value = a.substring(eq + 1);
      } else {
        if (!KNOWN.contains(a)) {
          throw new UsageException("unknown option '" + a + "'");
        }
        if (a.equals("--keep-db")) {
          flags.add(new String[] {a, "true"});
          continue;
        }
        if (i + 1 >= args.size()) {
          throw new UsageException(a + " needs a value");
        }
        value = args.get(++i);
      }
      if (!KNOWN.contains(name) || name.equals("--keep-db")) {
        throw new UsageException("unknown option '" + a + "'");
      }
      if (name.equals("--preset")) {
        preset = value;
      } else {
        flags.add(new String[] {name, value});
      }
    }
    Builder b = Builder.preset(preset);
    for (String[] f : flags) {
      b.set(f[0], f[1]);
    }
    return b.build();
  }

  private static final List<String> KNOWN = List.of("--preset", "--duration", "--rate", "--instances", "--seed",
      "--db", "--kill-every", "--pg-restart-at", "--fault-rate", "--refusal-rate", "--report",
      "--keep-db", "--provider-down");

  /** Mutable while the flags are applied; {@link #build()} checks that the values fit together. */
  private static final class Builder {
    private final String preset;
    private Duration duration;
    private double rate;
    private Integer instances;
    private long seed = 42;
    private String db = DEFAULT_DB;
    private Duration killEvery;
    private String pgRestartAt;
    private boolean pgRestartExplicit;
    private double faultRate;
    private double refusalRate;
    private Path report;
    private boolean keepDatabase;
    private Duration providerDown;

    private Builder(String preset) {
      this.preset = preset;
    }

    static Builder preset(String name) throws UsageException {
      Builder b = new Builder(name);
      switch (name) {
        case "short" -> {
          b.duration = Duration.ofSeconds(45);
          b.rate = 15;
          b.killEvery = Duration.ofSeconds(15);
          b.pgRestartAt = "0.5";
          b.faultRate = 0.1;
        }
        case "long" -> {
          b.duration = Duration.ofMinutes(10);
          b.rate = 25;
          b.killEvery = Duration.ofSeconds(40);
          b.pgRestartAt = "0.5";
          b.faultRate = 0.1;
        }
        default -> throw new UsageException("--preset must be short or long, got '" + name + "'");
      }
      return b;
    }

    void set(String flag, String value) throws UsageException {
      switch (flag) {
        case "--duration" -> duration = duration(flag, value);
        case "--rate" -> rate = number(flag, value, 0, MAX_RATE, false);
        case "--instances" -> {
          try {
            instances = Integer.parseInt(value);
          } catch (NumberFormatException e) {
            instances = -1;
          }
          if (instances < 1 || instances > MAX_INSTANCES) {
            throw new UsageException("--instances must be 1.." + MAX_INSTANCES + ", got '" + value + "'");
          }
        }
        case "--seed" -> {
          try {
            seed = Long.parseLong(value);
          } catch (NumberFormatException e) {
            throw new UsageException("--seed must be an integer, got '" + value + "'");
          }
        }
        case "--db" -> {
          if (!value.equals(H2) && !PG_URL.matcher(value).matches()) {
            throw new UsageException("--db must be h2 or a PostgreSQL JDBC URL"
                + " (jdbc:postgresql://host:port/database?user=...), got '" + redact(value) + "'");
          }
          db = value;
        }
        case "--kill-every" -> killEvery = value.equals("none") ? null : duration(flag, value);
        case "--pg-restart-at" -> {
          pgRestartAt = value;
          pgRestartExplicit = true;
        }
        case "--fault-rate" -> faultRate = number(flag, value, 0, MAX_FAULT_RATE, true);
        case "--refusal-rate" -> refusalRate = number(flag, value, 0, MAX_REFUSAL_RATE, true);
        case "--report" -> {
          if (value.isBlank()) {
            throw new UsageException("--report must name a folder, got an empty value");
          }
          report = Path.of(value);
        }
        case "--keep-db" -> keepDatabase = true;
        case "--provider-down" -> providerDown = value.equals("none") ? null : duration(flag, value);
        default -> throw new UsageException("unknown option '" + flag + "'");
      }
    }

    ChaosSettings build() throws UsageException {
      boolean h2 = db.equals(H2);
      int n = instances != null ? instances : h2 ? 1 : 3;
      if (h2 && n != 1) {
        throw new UsageException("--instances must be 1 with --db h2 (an H2 file has one owner), got " + n);
      }
      if (killEvery != null && killEvery.compareTo(MIN_KILL_EVERY) < 0) {
        throw new UsageException("--kill-every must be at least " + MIN_KILL_EVERY.toSeconds() + "s or none, got "
            + killEvery.toMillis() + "ms");
      }
      if (killEvery != null && killEvery.compareTo(duration) >= 0) {
        throw new UsageException("--kill-every (" + killEvery.toSeconds() + "s) must be shorter than --duration ("
            + duration.toSeconds() + "s), or none");
      }
      if (providerDown != null && providerDown.compareTo(MIN_PROVIDER_DOWN) < 0) {
        throw new UsageException("--provider-down must be at least " + MIN_PROVIDER_DOWN.toSeconds() + "s or none,"
            + " got " + providerDown.toMillis() + "ms");
      }
      if (providerDown != null && providerDown.multipliedBy(20).compareTo(duration.multipliedBy(13)) > 0) {
        throw new UsageException("--provider-down (" + providerDown.toSeconds() + "s) must end before 90% of"
            + " --duration (" + duration.toSeconds() + "s): it starts at a quarter of it, and the workload goes on"
            + " after the provider is back");
      }
      Duration pgAt = null;
      if (pgRestartAt != null && !pgRestartAt.equals("none")) {
        if (h2) {
          if (pgRestartExplicit) {
            throw new UsageException("--pg-restart-at needs PostgreSQL; with --db h2 use --pg-restart-at none");
          }
        } else {
          pgAt = restartAt(pgRestartAt, duration);
        }
      }
      if (!h2 && pgAt != null) {
        Matcher m = PG_URL.matcher(db);
        m.matches();
        String host = m.group(1).replaceFirst(":\\d+$", "");
        if (!List.of("127.0.0.1", "localhost").contains(host.toLowerCase(Locale.ROOT))) {
          throw new UsageException("--pg-restart-at restarts the PostgreSQL of this machine, but --db names host '"
              + host + "'; use --pg-restart-at none");
        }
      }
      Path dir = report != null ? report
          : Path.of("chaos-report", java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")
              .withZone(java.time.ZoneOffset.UTC).format(java.time.Instant.now()));
      return new ChaosSettings(preset, duration, rate, n, seed, db, killEvery, pgAt, faultRate, refusalRate, dir,
          keepDatabase, providerDown);
    }
  }

  /** A fraction of the duration in (0, 1), or a time ({@code 30s}, {@code 2m}; a bare number is seconds). */
  private static Duration restartAt(String value, Duration duration) throws UsageException {
    Duration at;
    if (value.contains(".")) {
      double f = number("--pg-restart-at", value, 0, 1, false);
      if (f >= 1) {
        throw new UsageException("--pg-restart-at as a fraction must be between 0 and 1, got '" + value + "'");
      }
      at = Duration.ofMillis(Math.round(duration.toMillis() * f));
    } else {
      at = duration("--pg-restart-at", value);
    }
    if (at.compareTo(duration) >= 0) {
      throw new UsageException("--pg-restart-at (" + value + ") must fall inside --duration ("
          + duration.toSeconds() + "s)");
    }
    return at;
  }

  private static Duration duration(String flag, String value) throws UsageException {
    Matcher m = DURATION.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new UsageException(flag + " must be a duration such as 90s, 10m or 500ms, got '" + value + "'");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2);
    Duration d = switch (unit) {
      case "ms" -> Duration.ofMillis(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofSeconds(n);
    };
    if (flag.equals("--duration") && (d.compareTo(MIN_DURATION) < 0 || d.compareTo(MAX_DURATION) > 0)) {
      throw new UsageException("--duration must be between 5s and 24h, got '" + value + "'");
    }
    if (d.isZero()) {
      throw new UsageException(flag + " must be positive, got '" + value + "'");
    }
    return d;
  }

  private static double number(String flag, String value, double min, double max, boolean minInclusive)
      throws UsageException {
    double d;
    try {
      d = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      d = Double.NaN;
    }
    if (Double.isNaN(d) || d > max || d < min || (!minInclusive && d == min)) {
      throw new UsageException(flag + " must be a number " + (minInclusive ? "from " : "above ") + fmt(min)
          + " to " + fmt(max) + ", got '" + value + "'");
    }
    return d;
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  /**
   * The URL (or a message holding URLs) with its credentials hidden, for everything printed or written: user info
   * before the host and the value of a {@code password} parameter become {@code ***}.
   */
  static String redact(String url) {
    return Main.redact(url);
  }

  /** The port of a PostgreSQL JDBC URL (5432 when it names none). */
  static int port(String url) {
    Matcher m = PG_URL.matcher(url);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + redact(url));
    }
    String host = m.group(1);
    int colon = host.lastIndexOf(':');
    return colon < 0 || host.endsWith("]") ? 5432 : Integer.parseInt(host.substring(colon + 1));
  }

  /** The JDBC URL of PostgreSQL's database {@code database} on the server of {@code url}, same parameters. */
  static String withDatabase(String url, String database) {
    Matcher m = PG_URL.matcher(url);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + redact(url));
    }
    return "jdbc:postgresql://" + m.group(1) + "/" + database + (m.group(3) == null ? "" : m.group(3));
  }
}
