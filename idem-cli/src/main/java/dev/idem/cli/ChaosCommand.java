package dev.idem.cli;

import dev.idem.cli.ChaosInvariants.Result;
import dev.idem.cli.ChaosSettings.UsageException;
import dev.idem.cli.ChaosWorkload.ChaosTimeline;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code idem chaos}: starts instances of the reference service on one database, drives a seeded workload through
 * idem-client while it kills instances, restarts PostgreSQL and injects provider and webhook faults, then checks the
 * exactly-once invariants and writes a report. Stateless between runs.
 */
final class ChaosCommand implements Command {
  static final Duration LEASE = Duration.ofSeconds(10);
  static final Duration COMPLETER_INTERVAL = Duration.ofSeconds(1);
  private static final Duration STARTUP = Duration.ofSeconds(180);
  private static final Duration DRAIN = Duration.ofSeconds(60);
  private static final Duration OUTBOX_DRAIN = Duration.ofSeconds(120);
  private static final double SINK_FAIL_BEFORE = 0.15;
  private static final double SINK_FAIL_AFTER = 0.05;
  private static final JsonMapper JSON = JsonMapper.builder().build();
  /** A new admin key at each run: nothing another user of the machine could guess. */
  private static final String ADMIN_KEY = "sk_chaos_admin_" + ChaosWorkload.RUN_TOKEN;
  /** The keyring of this run, in its text form: one fresh key that every instance shares. */
  private static final String KEYRING = "chaos:" + Base64.getEncoder().encodeToString(randomKey());
  /** The share of intents that may stay unanswered (every instance down for the whole retry budget). */
  private static final double MAX_UNANSWERED = 0.02;
  /** How long after the provider is back reconciliation has to close every uncertain record. */
  private static final Duration RECONCILE_WINDOW = Duration.ofSeconds(60);

  @Override
  public String name() {
    return "chaos";
  }

  @Override
  public String summary() {
    return "kill, restart and fault the reference service under load, then check exactly-once";
  }

  @Override
  public String usage() {
    return "usage: idem chaos [--preset short|long] [--duration D] [--rate N] [--instances N] [--seed N]\n"
        + "                  [--db h2|JDBC_URL] [--kill-every D|none] [--pg-restart-at F|D|none]\n"
        + "                  [--fault-rate F] [--refusal-rate F] [--provider-down D|none] [--report DIR]\n"
        + "                  [--keep-db]\n\n"
        + "Starts N instances of the reference payments service (child JVMs, one port each) on a PostgreSQL database\n"
        + "of its own (created on the server of --db and dropped afterwards), or on H2 with one instance; drives\n"
        + "payments and refunds of three tenants through idem-client (duplicates, sometimes to another instance;\n"
        + "bursts of 8 concurrent sends of one key; payload mismatches; another tenant's payments and keys) while it\n"
        + "kills an instance with SIGKILL every --kill-every and restarts it, restarts PostgreSQL once\n"
        + "(pg_ctlcluster ... main restart), makes the provider time out after committing or fail (--fault-rate,\n"
        + "half each, plus 200 x F ms latency), refuse charges and refunds for good (--refusal-rate: 422\n"
        + "PROVIDER.refused, a final answer), takes the provider down for --provider-down (every call fails, so\n"
        + "records pass their resume cap of " + ChaosSettings.OUTAGE_RESUME_CAP + " failed resumptions and become"
        + " uncertain; once it is back,\n"
        + "reconciliation decides them) and has its webhook sink fail 20% of deliveries. Then it checks the\n"
        + "invariants, prints them with the counts, and writes report.json and chart.png into --report.\n\n"
        + "options (defaults: the short preset):\n"
        + "  --preset short|long    short: 45s at 15/s, a kill every 15s, PostgreSQL restart at 0.5, faults 0.1\n"
        + "                         long: 10m at 25/s, a kill every 40s, PostgreSQL restart at 0.5, faults 0.1\n"
        + "  --duration D           how long the workload runs: 90s, 10m (5s..24h)\n"
        + "  --rate N               intents per second (a burst counts once), above 0 up to 500\n"
        + "  --instances N          instances of the service, 1..8 (default 3; 1 with --db h2)\n"
        + "  --seed N               seeds the workload, the provider's faults and the sink (default 42)\n"
        + "  --db h2|JDBC_URL       PostgreSQL server (default " + ChaosSettings.DEFAULT_DB + ")\n"
        + "  --kill-every D|none    time between two kill -9 of an instance\n"
        + "  --pg-restart-at F|D|none  when PostgreSQL restarts: a fraction of --duration (0.5) or a time (30s)\n"
        + "  --fault-rate F         provider faults, 0..0.9: F/2 timeouts after commit, F/2 errors\n"
        + "  --refusal-rate F       charges and refunds the provider refuses for good, 0..0.9 (default 0)\n"
        + "  --provider-down D|none the provider is down for D from a quarter of --duration on (default none);\n"
        + "                         adds the invariants on uncertain records\n"
        + "  --report DIR           where report.json, chart.png and the instances' logs go\n"
        + "                         (default chaos-report/<timestamp>)\n"
        + "  --keep-db              keep the run's PostgreSQL database for inspection\n\n"
        + "exit status: 0 every invariant held, 1 one did not (or the run could not be set up), 2 bad command line\n";
  }

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    if (args.contains("--help") || args.contains("-h")) {
      out.print(usage());
      return Main.OK;
    }
    ChaosSettings settings;
    try {
      settings = ChaosSettings.parse(args);
    } catch (UsageException e) {
      err.println("idem chaos: " + e.getMessage());
      err.println("Run 'idem chaos --help' for the options.");
      return Main.USAGE;
    }
    System.setProperty("java.awt.headless", "true");
    try {
      return new Run(settings, out, err).execute();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("idem chaos: interrupted");
      return Main.FAILED;
    } catch (IOException | SQLException | RuntimeException e) {
      err.println("idem chaos: the run failed: " + ChaosSettings.redact(e.toString()));
      return Main.FAILED;
    }
  }

  /**
   * What the instances get through their environment rather than their command line, which every user of the machine
   * can read ({@code ps}, {@code /proc/<pid>/cmdline}): the database's URL (it may hold a password), the admin key and
   * the tenants' API keys, and the keyring that seals kept answers (one for the run, shared by every instance).
   */
  static Map<String, String> secretEnvironment(String dbUrl) {
    StringJoiner keys = new StringJoiner(",");
    for (String tenant : ChaosWorkload.TENANTS) {
      keys.add(ChaosWorkload.apiKey(tenant) + "=" + tenant);
    }
    return Map.of("SPRING_DATASOURCE_URL", dbUrl, "PAYMENTS_ADMIN_KEY", ADMIN_KEY, "PAYMENTS_API_KEYS",
        keys.toString(), "IDEM_ENCRYPTION_KEYRING", KEYRING);
  }

  private static byte[] randomKey() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return key;
  }

  /** The admin key of this run. */
  static String adminKey() {
    return ADMIN_KEY;
  }

  /** One run: its instances, database, sink and schedule. */
  private static final class Run {
    private final ChaosSettings settings;
    private final PrintStream out;
    private final PrintStream err;
    private final String runId;
    private final List<ChaosInstance> instances = new CopyOnWriteArrayList<>();
    private final ChaosInvariants invariants = new ChaosInvariants();
    private final ConcurrentLinkedQueue<String> scheduleErrors = new ConcurrentLinkedQueue<>();
    private final AtomicLong kills = new AtomicLong();
    private final AtomicLong skippedKills = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();
    private final AtomicLong pgRestarts = new AtomicLong();
    private final AtomicLong pgDownMillis = new AtomicLong();
    private volatile boolean providerDown;
    private volatile ChaosWorkload workloadRef;
    private int resolvedByTheRun;
    private final Map<String, String> endpoints = new LinkedHashMap<>();
    private final Map<String, String> endpointSecrets = new LinkedHashMap<>();
    private ChaosTimeline timeline;
    private ChaosDatabase db;

    Run(ChaosSettings settings, PrintStream out, PrintStream err) {
      this.settings = settings;
      this.out = out;
      this.err = err;
      this.runId = java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd_HHmmss")
          .withZone(ZoneOffset.UTC).format(Instant.now())
          + "_" + java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    int execute() throws IOException, SQLException, InterruptedException {
      Path dir = settings.report();
      Files.createDirectories(dir);
      Instant started = Instant.now();
      out.println("idem chaos: " + describe() + "; report in " + dir.toAbsolutePath());
      out.flush();
      db = ChaosDatabase.create(settings, runId, dir);
      ChaosWorkload workload = null;
      ChaosWebhookSink sink = null;
      ExecutorService restarter = Executors.newCachedThreadPool(daemon("chaos-restart"));
      ScheduledExecutorService control = Executors.newScheduledThreadPool(2, daemon("chaos-control"));
      Thread cleanup = new Thread(this::cleanUpOnExit, "chaos-cleanup");
      Runtime.getRuntime().addShutdownHook(cleanup);
      try {
        ChaosWorkload[] holder = new ChaosWorkload[1];
        sink = new ChaosWebhookSink(runId, settings.seed(), SINK_FAIL_BEFORE, SINK_FAIL_AFTER,
            (tenant, id) -> holder[0].shown.add(new String[] {tenant, id, "event"}));
        List<String> args = instanceArgs();
        for (ChaosInvariants.Secret secret : secrets()) {
          if (args.stream().anyMatch(a -> a.contains(secret.value()))) {
            throw new IllegalStateException(secret.name() + " is on the instances' command line");
          }
        }
        for (int i = 0; i < settings.instances(); i++) {
          instances.add(new ChaosInstance(i, dir, args, secretEnvironment(db.url())));
        }
        startAll(restarter);
        createEndpoints(sink);
        out.println("idem chaos: " + instances.size() + " instance(s) up on "
            + (db.isH2() ? "H2" : "PostgreSQL database "
            + db.name()) + "; workload starts");
        out.flush();
        timeline = new ChaosTimeline(settings.duration().plusMinutes(10));
        workload = new ChaosWorkload(settings, instances, timeline);
        holder[0] = workload;
        workloadRef = workload;
        schedule(control, restarter);
        boolean workersEnded = workload.run(DRAIN);
        control.shutdownNow();
        if (!control.awaitTermination(120, TimeUnit.SECONDS)) {
          scheduleErrors.add("the fault schedule was still running 120 s after the workload");
        }
        if (settings.pgRestartAt() != null && pgRestarts.get() != 1 && scheduleErrors.stream()
            .noneMatch(e -> e.startsWith("PostgreSQL restart"))) {
          scheduleErrors.add("PostgreSQL restart: planned at " + settings.pgRestartAt().toMillis() / 1000.0
              + " s but it never ran");
        }
        if (!workersEnded) {
          invariants.add("every workload worker ended", false, "workers were still running " + DRAIN.toSeconds()
              + " s after the workload, and 10 s after they were interrupted; the counts below may still move");
        }
        out.println("idem chaos: workload done; waiting for the instances, the completer and the outbox");
        out.flush();
        restarter.shutdown();
        restarter.awaitTermination(STARTUP.toSeconds(), TimeUnit.SECONDS);
        for (ChaosInstance instance : instances) {
          if (!instance.isUp()) {
            instance.kill();
            instance.start(STARTUP);
            restarts.incrementAndGet();
          }
        }
        for (ChaosInstance instance : instances) {
          put(instance.uri("/admin/faults"),
              "{\"provider_timeout_after_commit_rate\":0,\"provider_error_rate\":0,\"provider_latency_ms\":0,"
              + "\"provider_refusal_rate\":0}");
        }
        timeline.mark("pg", "faults off");
        if (settings.providerDown() != null) {
          resolvedByTheRun = invariants.awaitUncertainClosed(instances.get(0), RECONCILE_WINDOW);
        }
        invariants.awaitNoneInProgress(instances.get(0), LEASE.plus(COMPLETER_INTERVAL.multipliedBy(2)));
        JsonNode outbox = invariants.awaitOutboxDrained(instances.get(0), OUTBOX_DRAIN);
        invariants.checkAcknowledgedReadable(workload, instances);
        invariants.add("every replay is byte-identical to the first answer for its key",
            workload.replayViolations.sum() == 0 && workload.unexpectedMismatches.sum() == 0,
            workload.keptAnswers.sum() + " kept answers, " + workload.replayComparisons.sum()
            + " compared (status, Location, body) with the first one for their key, " + workload.replays.sum()
            + " replays; differing: " + workload.replayViolations.sum() + "; unexpected payload mismatches: "
            + workload.unexpectedMismatches.sum()
            + (workload.replayExamples.isEmpty() ? "" : " " + String.join("; ", workload.replayExamples)));
        for (ChaosInstance instance : instances) {
          instance.stop();
        }
        try (Connection c = db.connect()) {
          invariants.checkDatabase(c, workload, sink, endpoints);
          if (settings.providerDown() != null) {
            invariants.checkUncertain(c, resolvedByTheRun, true);
          }
          checkExercised(workload, sink);
          invariants.checkSecretsAbsent(c, dir, secrets());
        }
        if (!scheduleErrors.isEmpty()) {
          invariants.add("the fault schedule ran as planned", false, String.join("; ", scheduleErrors));
        }
        return report(dir, started, workload, sink, outbox);
      } finally {
        control.shutdownNow();
        restarter.shutdownNow();
        try {
          Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException e) {
          // the JVM is already shutting down: the hook runs as well, and both kill and drop are idempotent
        }
        for (ChaosInstance instance : instances) {
          instance.close();
        }
        if (sink != null) {
          sink.close();
        }
        if (!settings.keepDatabase()) {
          try {
            db.drop();
          } catch (SQLException e) {
            err.println("idem chaos: could not drop database " + db.name() + ": " + e.getMessage());
          }
        }
      }
    }

    /** The shutdown hook: kills every child JVM and drops the run's database when the run is interrupted. */
    private void cleanUpOnExit() {
      for (ChaosInstance instance : instances) {
        instance.killNow();
      }
      if (db != null && !settings.keepDatabase()) {
        try {
          db.drop();
        } catch (SQLException | RuntimeException e) {
          err.println("idem chaos: could not drop database " + db.name() + ": " + e.getMessage());
        }
      }
    }

    /**
     * The run exercised what the invariants claim: an invariant that holds because nothing happened is no proof.
     */
    private void checkExercised(ChaosWorkload w, ChaosWebhookSink sink) {
      List<String> missing = new ArrayList<>();
      long intents = w.intents.sum();
      long unanswered = w.unanswered.sum();
      if (w.ackedPayments.isEmpty()) {
        missing.add("no acknowledged payment");
      }
      if (w.replayComparisons.sum() == 0) {
        missing.add("no kept answer compared with a first one");
      }
      if (w.crossTenantProbes.sum() == 0) {
        missing.add("no refund of another tenant's payment");
      }
      if (w.sharedKeys.sum() == 0) {
        missing.add("no key reused by another tenant");
      }
      if (sink.deliveries().isEmpty()) {
        missing.add("no event reached the sink");
      }
      if (settings.killEvery() != null && kills.get() == 0) {
        missing.add("no kill (" + skippedKills.get() + " skipped)");
      }
      if (settings.pgRestartAt() != null && pgRestarts.get() != 1) {
        missing.add(pgRestarts.get() + " PostgreSQL restarts, planned 1");
      }
      long inOutage = w.unansweredInOutage.sum();
      if (intents == 0 || unanswered - inOutage > MAX_UNANSWERED * intents) {
        missing.add((unanswered - inOutage) + " of " + intents + " intents unanswered outside the provider's outage"
            + " (at most " + fmt(MAX_UNANSWERED * 100) + "%)");
      }
      if (settings.providerDown() != null && w.uncertainAnswers.sum() == 0) {
        missing.add("no answer 409 outcome_uncertain while the provider was down");
      }
      if (settings.refusalRate() > 0 && w.refusedPayments.isEmpty()) {
        missing.add("no payment refused by the provider at --refusal-rate " + fmt(settings.refusalRate()));
      }
      for (int status : List.of(400, 401)) {
        long n = w.finalStatuses.getOrDefault(status, new LongAdder()).sum();
        if (n > 0) {
          missing.add(n + " final " + status + " answers");
        }
      }
      invariants.add("the run exercised what it claims", missing.isEmpty(), String.format(Locale.ROOT,
          "%d acknowledged payments, %d refused, %d replays compared, %d cross-tenant probes, %d shared keys,"
          + " %d events at the sink, %d kills (%d skipped), %d PostgreSQL restarts, %d of %d intents unanswered%s",
          w.ackedPayments.size(), w.refusedPayments.size(), w.replayComparisons.sum(), w.crossTenantProbes.sum(),
          w.sharedKeys.sum(),
          sink.deliveries().size(), kills.get(), skippedKills.get(), pgRestarts.get(), unanswered, intents,
          missing.isEmpty() ? "" : "; missing: " + String.join("; ", missing)));
    }

    /** What must appear in no log and no table: the API keys, the admin key, the webhook secrets, a bearer token. */
    private List<ChaosInvariants.Secret> secrets() {
      List<ChaosInvariants.Secret> secrets = new ArrayList<>();
      for (String tenant : ChaosWorkload.TENANTS) {
        secrets.add(new ChaosInvariants.Secret("the API key of " + tenant, ChaosWorkload.apiKey(tenant)));
      }
      secrets.add(new ChaosInvariants.Secret("the admin key", ADMIN_KEY));
      for (Map.Entry<String, String> e : endpointSecrets.entrySet()) {
        secrets.add(new ChaosInvariants.Secret("the webhook secret of " + e.getKey(), e.getValue()));
        if (e.getValue().startsWith("whsec_")) {
          secrets.add(new ChaosInvariants.Secret("the body of the webhook secret of " + e.getKey(),
              e.getValue().substring("whsec_".length())));
        }
      }
      secrets.add(new ChaosInvariants.Secret("\"Bearer \"", "Bearer "));
      return secrets;
    }

    private String describe() {
      return String.format(Locale.ROOT, "preset %s, %ds at %s/s, %d instance(s), seed %d, %s, kill every %s,"
          + " PostgreSQL restart at %s, fault rate %s, refusal rate %s, provider down %s", settings.preset(),
          settings.duration().toSeconds(), fmt(settings.rate()), settings.instances(), settings.seed(),
          settings.isH2() ? "H2" : ChaosSettings.redact(settings.db()),
          settings.killEvery() == null ? "never" : settings.killEvery().toSeconds() + "s",
          settings.pgRestartAt() == null ? "never" : settings.pgRestartAt().toMillis() / 1000.0 + "s",
          fmt(settings.faultRate()), fmt(settings.refusalRate()), settings.providerDown() == null ? "never"
          : settings.providerDown().toSeconds() + "s from " + settings.providerDownAt().toSeconds() + "s");
    }

    /** The instances' arguments, visible to every user of the machine: no secret among them. */
    private List<String> instanceArgs() {
      List<String> a = new ArrayList<>();
      a.add("--payments.provider.timeout-after-commit-rate=" + settings.faultRate() / 2);
      a.add("--payments.provider.error-rate=" + settings.faultRate() / 2);
      a.add("--payments.provider.latency-ms=" + Math.round(200 * settings.faultRate()));
      a.add("--payments.provider.refusal-rate=" + settings.refusalRate());
      a.add("--idem.default-lease=" + LEASE.toSeconds() + "s");
      a.add("--idem.completer.interval=" + COMPLETER_INTERVAL.toSeconds() + "s");
      a.add("--payments.outbox.backoff-initial=200ms");
      a.add("--payments.outbox.backoff-max=2s");
      a.add("--payments.outbox.max-attempts=50");
      a.add("--payments.outbox.lease=5s");
      a.add("--payments.outbox.poll-interval=200ms");
      a.add("--payments.webhooks.allow-private-addresses=true");
      a.add("--payments.webhooks.timeout=5s");
      if (settings.providerDown() != null) {
        a.add("--idem.default-resume-cap-attempts=" + ChaosSettings.OUTAGE_RESUME_CAP);
      }
      return a;
    }

    private void startAll(ExecutorService pool) throws IOException, InterruptedException {
      List<Future<?>> started = new ArrayList<>();
      for (ChaosInstance instance : instances) {
        started.add(pool.submit(() -> {
          instance.start(STARTUP);
          return null;
        }));
      }
      for (Future<?> f : started) {
        try {
          f.get(STARTUP.toSeconds() + 10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          throw new IOException("an instance did not start: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
          throw new IOException("the instances did not start within " + STARTUP.toSeconds() + " s");
        }
      }
    }

    private void createEndpoints(ChaosWebhookSink sink) throws IOException, InterruptedException {
      HttpClient http = HttpClient.newHttpClient();
      for (String tenant : ChaosWorkload.TENANTS) {
        String body = "{\"url\":\"" + sink.url(tenant) + "\",\"events\":[\"*\"]}";
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(instances.get(0).uri("/webhook-endpoints"))
            .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + ChaosWorkload.apiKey(tenant))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
          throw new IOException("creating the webhook endpoint of " + tenant + " answered " + r.statusCode() + " "
              + r.body());
        }
        JsonNode endpoint = JSON.readTree(r.body());
        endpoints.put(tenant, endpoint.path("id").asString());
        sink.addTenant(tenant, endpoint.path("secret").asString());
        endpointSecrets.put(tenant, endpoint.path("secret").asString());
      }
    }

    private void schedule(ScheduledExecutorService control, ExecutorService restarter) {
      if (settings.killEvery() != null) {
        SplittableRandom victims = new SplittableRandom(settings.seed() ^ 0x5DEECE66DL);
        long every = settings.killEvery().toMillis();
        control.scheduleAtFixedRate(() -> killOne(victims, restarter), every, every, TimeUnit.MILLISECONDS);
      }
      if (settings.providerDown() != null) {
        long at = settings.providerDownAt().toMillis();
        control.schedule(() -> provider(true), at, TimeUnit.MILLISECONDS);
        control.schedule(() -> provider(false), at + settings.providerDown().toMillis(), TimeUnit.MILLISECONDS);
      }
      if (settings.pgRestartAt() != null) {
        control.schedule(() -> {
          timeline.mark("pg", "PostgreSQL restart");
          try {
            pgDownMillis.set(db.restartPostgres());
            pgRestarts.incrementAndGet();
          } catch (IOException | SQLException | RuntimeException e) {
            scheduleErrors.add("PostgreSQL restart: " + e.getMessage());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            scheduleErrors.add("PostgreSQL restart interrupted");
          }
        }, settings.pgRestartAt().toMillis(), TimeUnit.MILLISECONDS);
      }
    }

    /** Takes the provider down on every instance that is up, or brings it back (to the run's fault rates). */
    private void provider(boolean down) {
      providerDown = down;
      ChaosWorkload w = workloadRef;
      if (w != null) {
        w.providerDown(down);
      }
      timeline.mark("pg", down ? "provider down" : "provider back");
      for (ChaosInstance instance : instances) {
        if (instance.isUp()) {
          providerFaults(instance, down);
        }
      }
    }

    private void providerFaults(ChaosInstance instance, boolean down) {
      try {
        put(instance.uri("/admin/faults"), "{\"provider_error_rate\":" + (down ? 1 : settings.faultRate() / 2) + "}");
      } catch (IOException | RuntimeException e) {
        scheduleErrors.add("provider " + (down ? "down" : "back") + " on instance " + instance.index() + ": "
            + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private void killOne(SplittableRandom victims, ExecutorService restarter) {
      try {
        killOneNow(victims, restarter);
      } catch (RuntimeException e) {
        scheduleErrors.add("kill at " + Math.round(timeline.now()) + " s: " + e);
      }
    }

    private void killOneNow(SplittableRandom victims, ExecutorService restarter) {
      List<ChaosInstance> up = instances.stream().filter(ChaosInstance::isUp).toList();
      if (up.isEmpty() || (instances.size() > 1 && up.size() < 2)) {
        skippedKills.incrementAndGet();
        return;
      }
      ChaosInstance victim = up.get(victims.nextInt(up.size()));
      try {
        victim.kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      kills.incrementAndGet();
      timeline.mark("kill", "kill -9 #" + victim.index());
      restarter.execute(() -> {
        try {
          victim.start(STARTUP);
          restarts.incrementAndGet();
          if (providerDown) {
            // the provider lives in each instance: a restarted one starts with it up
            providerFaults(victim, true);
          }
          timeline.mark("up", "#" + victim.index() + " up");
        } catch (IOException | RuntimeException e) {
          scheduleErrors.add("restart of instance " + victim.index() + ": " + e.getMessage());
        }
      });
    }

    /**
     * PUTs the JSON, again on a 503 (the instance is serving as many requests as it allows: the workload's) for up to
     * 20 s.
     */
    private static void put(URI uri, String json) throws IOException, InterruptedException {
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (true) {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
        if (r.statusCode() != 503 || System.nanoTime() - deadline > 0) {
          throw new IOException("PUT " + uri + " answered " + r.statusCode() + " " + r.body());
        }
        TimeUnit.MILLISECONDS.sleep(200);
      }
    }

    private int report(Path dir, Instant started, ChaosWorkload w, ChaosWebhookSink sink, JsonNode outbox)
        throws IOException {
      Map<String, Object> counts = new LinkedHashMap<>();
      counts.put("intents", w.intents.sum());
      counts.put("requests", w.requests.sum());
      counts.put("attempts", w.attempts.sum());
      counts.put("retries", w.retries.sum());
      counts.put("failovers_to_another_instance", w.failovers.sum());
      counts.put("duplicates", w.duplicates.sum());
      counts.put("refund_duplicates", w.refundDuplicates.sum());
      counts.put("bursts", w.bursts.sum());
      counts.put("replays", w.replays.sum());
      counts.put("replay_comparisons", w.replayComparisons.sum());
      counts.put("conflicts_in_progress_409", w.inProgressConflicts.sum());
      counts.put("payload_mismatches_422", w.payloadMismatches.sum());
      counts.put("cross_tenant_probes", w.crossTenantProbes.sum());
      counts.put("keys_reused_by_another_tenant", w.sharedKeys.sum());
      counts.put("unanswered_intents", w.unanswered.sum());
      counts.put("unanswered_in_provider_outage", w.unansweredInOutage.sum());
      counts.put("uncertain_answers_409", w.uncertainAnswers.sum());
      counts.put("reconciled_failed_answers_422", w.reconciledFailedAnswers.sum());
      counts.put("shed_by_the_workload", w.shed.sum());
      counts.put("acknowledged_payments", w.ackedPayments.size());
      counts.put("acknowledged_refunds", w.ackedRefunds.size());
      counts.put("refused_payments_422", w.refusedPayments.size());
      counts.put("refused_refunds_422", w.refusedRefunds.size());
      counts.put("refused_answers_422", w.refusedPaymentAnswers.sum() + w.refusedRefundAnswers.sum());
      counts.put("final_statuses", w.statusCounts());
      Map<String, Object> faults = new LinkedHashMap<>();
      faults.put("provider_timeout_after_commit_rate", settings.faultRate() / 2);
      faults.put("provider_error_rate", settings.faultRate() / 2);
      faults.put("provider_latency_ms", Math.round(200 * settings.faultRate()));
      faults.put("provider_refusal_rate", settings.refusalRate());
      faults.put("provider_down_s", settings.providerDown() == null ? null : settings.providerDown().toSeconds());
      faults.put("provider_timeouts_seen_by_clients_504", w.providerTimeoutsSeen.sum());
      faults.put("other_5xx_seen_by_clients", w.unavailableSeen.sum());
      faults.put("transport_failures_seen_by_clients", w.transportFailures.sum());
      faults.put("kills", kills.get());
      faults.put("kills_skipped_no_spare_instance", skippedKills.get());
      faults.put("instance_restarts", restarts.get());
      faults.put("instance_starts_tried_again", instances.stream().mapToLong(ChaosInstance::failedStarts).sum());
      faults.put("postgres_restarts", pgRestarts.get());
      faults.put("postgres_restart_ms", pgDownMillis.get());
      faults.put("sink_failures_before_effect", sink.failedBefore.get());
      faults.put("sink_failures_after_effect", sink.failedAfter.get());
      counts.put("faults", faults);
      Map<String, Object> events = new LinkedHashMap<>();
      Map<String, Long> deliveries = sink.deliveries();
      events.put("events_at_sink", deliveries.size());
      events.put("deliveries", deliveries.values().stream().mapToLong(Long::longValue).sum());
      events.put("redeliveries", deliveries.values().stream().mapToLong(n -> n - 1).sum());
      events.put("inbox_processed", sink.processed.get());
      events.put("inbox_duplicates", sink.duplicates.get());
      events.put("bad_signatures", sink.badSignatures.get());
      events.put("outbox_stats", outbox == null ? null : outbox.path("counts").toString());
      counts.put("webhooks", events);

      List<Result> results = invariants.results();
      boolean passed = results.stream().allMatch(Result::passed);
      List<Object> inv = new ArrayList<>();
      for (Result r : results) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", r.name());
        m.put("passed", r.passed());
        m.put("detail", r.detail());
        inv.add(m);
      }
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("preset", settings.preset());
      s.put("duration_s", settings.duration().toSeconds());
      s.put("rate", settings.rate());
      s.put("instances", settings.instances());
      s.put("seed", settings.seed());
      s.put("db", settings.isH2() ? "h2" : ChaosSettings.redact(settings.db()));
      s.put("database", db.name());
      s.put("kill_every_s", settings.killEvery() == null ? null : settings.killEvery().toSeconds());
      s.put("pg_restart_at_s", settings.pgRestartAt() == null ? null : settings.pgRestartAt().toMillis() / 1000.0);
      s.put("fault_rate", settings.faultRate());
      s.put("refusal_rate", settings.refusalRate());
      s.put("provider_down_s", settings.providerDown() == null ? null : settings.providerDown().toSeconds());
      List<Object> marks = new ArrayList<>();
      for (ChaosTimeline.Mark m : timeline.marks) {
        marks.add(Map.of("at_s", Math.round(m.second() * 10) / 10.0, "kind", m.kind(), "label", m.label()));
      }
      Map<String, Object> report = new LinkedHashMap<>();
      report.put("command", "./idem chaos " + String.join(" ", commandLine()));
      report.put("started_at", started.toString());
      report.put("elapsed_s", Duration.between(started, Instant.now()).toSeconds());
      report.put("settings", s);
      report.put("counts", counts);
      report.put("invariants", inv);
      report.put("passed", passed);
      report.put("marks", marks);
      report.put("client_errors", new ArrayList<>(w.clientErrors));
      ChaosReport.writeJson(dir.resolve("report.json"), report);
      ChaosReport.writeChart(dir.resolve("chart.png"), timeline, String.format(Locale.ROOT,
          "idem chaos: preset %s, %ds at %s/s, %d instance(s), seed %d, fault rate %s (t = 0 when the workload starts)",
          settings.preset(), settings.duration().toSeconds(), fmt(settings.rate()), settings.instances(),
          settings.seed(), fmt(settings.faultRate())));

      out.println();
      out.println("counts");
      printMap(counts, "  ");
      out.println();
      out.println("invariants");
      for (Result r : results) {
        out.println("  " + (r.passed() ? "PASS " : "FAIL ") + r.name());
        out.println("       " + r.detail());
      }
      out.println();
      out.println("idem chaos: " + (passed ? "every invariant held" : "INVARIANT VIOLATED") + "; report: "
          + dir.resolve("report.json").toAbsolutePath() + ", chart: " + dir.resolve("chart.png").toAbsolutePath());
      out.flush();
      return passed ? Main.OK : Main.FAILED;
    }

    private List<String> commandLine() {
      List<String> a = new ArrayList<>(List.of("--preset", settings.preset(), "--duration",
          settings.duration().toSeconds() + "s", "--rate", fmt(settings.rate()), "--instances",
          Integer.toString(settings.instances()), "--seed", Long.toString(settings.seed()), "--db",
          ChaosSettings.redact(settings.db()), "--kill-every", settings.killEvery() == null ? "none"
          : settings.killEvery().toSeconds() + "s", "--pg-restart-at", settings.pgRestartAt() == null ? "none"
          : settings.pgRestartAt().toMillis() + "ms", "--fault-rate", fmt(settings.faultRate()), "--refusal-rate",
          fmt(settings.refusalRate()), "--provider-down", settings.providerDown() == null ? "none"
          : settings.providerDown().toSeconds() + "s"));
      return a;
    }

    private void printMap(Map<String, Object> map, String indent) {
      for (Map.Entry<String, Object> e : map.entrySet()) {
        if (e.getValue() instanceof Map<?, ?> m) {
          out.println(indent + e.getKey());
          @SuppressWarnings("unchecked")
          Map<String, Object> inner = (Map<String, Object>) m;
          printMap(inner, indent + "  ");
        } else {
          out.printf(Locale.ROOT, "%s%-40s %s%n", indent, e.getKey(), e.getValue());
        }
      }
    }
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
