package dev.idem.cli;

import dev.idem.core.Checkpoint;
import dev.idem.core.Completer;
import dev.idem.core.Execution.Outcome;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.OperationPolicy;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.UuidV7;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.jdbc.JdbcTransaction;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.h2.jdbcx.JdbcConnectionPool;

/**
 * {@code idem engine-demo}: walks through the engine (no HTTP)'s contract on an embedded H2 database (a fresh file under
 * {@code ./data}), printing each exchange, and exits 0 only if every step behaved as the contract says.
 */
final class EngineDemoCommand implements Command {
  private static final String PAYMENTS = "POST /payments";
  private static final String CHARGES = "POST /charges";

  @Override
  public String name() {
    return "engine-demo";
  }

  @Override
  public String summary() {
    return "walk through the engine on an embedded H2 database and check every step";
  }

  @Override
  public String usage() {
    return "usage: idem engine-demo [--data DIR]\n\n"
        + "Runs the engine's scenarios on a fresh embedded H2 database under DIR (default ./data) and prints each\n"
        + "exchange: a payment, its replay, a reused key with another body, 20 concurrent duplicates, a transient\n"
        + "failure, a phased charge whose worker dies after calling the provider (finished by the completer), another\n"
        + "tenant reusing the key, and purge. Exit status 0 when every step behaved as the contract says, 1 otherwise.\n";
  }

  /** Moves by hand; the demo uses it to expire leases and records without waiting. */
  private static final class DemoClock extends Clock {
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.ofEpochMilli(System.currentTimeMillis()));

    void advance(Duration d) {
      now.updateAndGet(i -> i.plus(d));
    }

    @Override
    public Instant instant() {
      return now.get();
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  private PrintStream out;
  private int failures;

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    Path data = Path.of("data");
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--data")) {
        if (i + 1 >= args.size()) {
          return usageError(err, "--data needs a value");
        }
        data = Path.of(args.get(++i));
      } else if (a.equals("--help") || a.equals("-h")) {
        out.print(usage());
        return Main.OK;
      } else {
        return usageError(err, "unknown option '" + a + "'");
      }
    }
    this.out = out;
    this.failures = 0;
    Path db = data.toAbsolutePath().resolve("demo-" + UuidV7.next());
    JdbcConnectionPool pool = JdbcConnectionPool.create("jdbc:h2:file:" + db + ";DB_CLOSE_DELAY=-1;WRITE_DELAY=0", "sa", "");
    pool.setMaxConnections(32);
    try {
      Files.createDirectories(data);
      out.println("idem engine-demo: embedded H2 database at " + db + ".mv.db");
      walkThrough(pool);
    } catch (Exception e) {
      err.println("idem engine-demo: failed: " + e);
      e.printStackTrace(err);
      return Main.FAILED;
    } finally {
      pool.dispose();
    }
    out.println();
    if (failures == 0) {
      out.println("every step behaved as the contract says");
      return Main.OK;
    }
    out.println(failures + " step(s) did not behave as the contract says");
    return Main.FAILED;
  }

  private int usageError(PrintStream err, String problem) {
    err.println("idem " + name() + ": " + problem);
    err.print(usage());
    return Main.USAGE;
  }

  private void walkThrough(JdbcConnectionPool pool) throws Exception {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE payment (id VARCHAR(300) PRIMARY KEY, tenant VARCHAR(64) NOT NULL,"
          + " amount BIGINT NOT NULL)");
      st.execute("CREATE TABLE provider_charge (derived_key VARCHAR(300) PRIMARY KEY, calls INT NOT NULL)");
    }
    DemoClock clock = new DemoClock();
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pool).name("demo").createSchemaIfMissing(true).build();
    AtomicInteger providerCalls = new AtomicInteger();
    AtomicReference<Runnable> crashAfterProviderCall = new AtomicReference<>();
    Idem idem = Idem.builder().name("demo").store(store).clock(clock)
        .policy(CHARGES, OperationPolicy.builder().lease(Duration.ofSeconds(10)).build())
        .phased(charges(pool, providerCalls, crashAfterProviderCall))
        .build();

    section("1. first request");
    Execution first = pay(idem, pool, "alice", "key-1", "{\"amount\":1000,\"currency\":\"EUR\"}");
    check(first.outcome() == Outcome.STORED && first.response().status() == 201, "stored, 201");

    section("2. the retry: same key, same body (members reordered, other whitespace)");
    Execution replay = pay(idem, pool, "alice", "key-1", "{ \"currency\": \"EUR\", \"amount\": 1000 }");
    check(replay.outcome() == Outcome.REPLAYED
            && replay.response().bodyAsString().equals(first.response().bodyAsString()),
        "replayed, byte-identical body, no second payment");
    check(count(pool, "SELECT COUNT(*) FROM payment WHERE tenant = 'alice'") == 1, "one payment row");

    section("3. the same key with another body");
    Execution mismatch = pay(idem, pool, "alice", "key-1", "{\"amount\":999,\"currency\":\"EUR\"}");
    check(mismatch.outcome() == Outcome.PAYLOAD_MISMATCH && mismatch.differingFields().equals(List.of("amount")),
        "payload mismatch naming [amount] (HTTP 422), nothing ran");

    section("4. 20 concurrent duplicates of a new key");
    List<Execution> burst = concurrent(20, () -> pay(idem, pool, "alice", "key-burst", "{\"amount\":50}"));
    Set<String> bodies = ConcurrentHashMap.newKeySet();
    int stored = 0;
    for (Execution e : burst) {
      stored += e.outcome() == Outcome.STORED ? 1 : 0;
      if (e.response() != null) {
        bodies.add(e.response().bodyAsString());
      }
    }
    out.printf("   outcomes: %s%n", summarize(burst));
    check(stored == 1 && bodies.size() == 1, "exactly one STORED; every answer identical");
    check(count(pool, "SELECT COUNT(*) FROM payment WHERE id = 'pay_alice_key-burst'") == 1, "one payment row");

    section("5. a transient failure (503) frees the key; the retry runs");
    Execution unavailable = idem.atomic(request("alice", PAYMENTS, "key-2", "{\"amount\":70}"),
        tx -> StoredResponse.json(503, "{\"code\":\"" + ProblemCode.DEPENDENCY_UNAVAILABLE
            + "\",\"retryable\":true}"));
    show("alice", "key-2", unavailable);
    Execution afterOutage = pay(idem, pool, "alice", "key-2", "{\"amount\":70}");
    check(unavailable.outcome() == Outcome.NOT_STORED && afterOutage.outcome() == Outcome.STORED,
        "503 not kept; the retry stored 201");

    section("6. phased: the worker dies after the provider charged, before recording it");
    crashAfterProviderCall.set(() -> {
      throw new WorkerDied();
    });
    IdempotentRequest charge = request("alice", CHARGES, "key-3", "{\"amount\":2500}");
    try {
      idem.phased(charge);
      check(false, "the simulated crash happened");
    } catch (WorkerDied died) {
      out.println("   worker died after the provider call (provider calls so far: " + providerCalls.get() + ")");
    }
    holdLease(store, charge.recordKey(), clock);
    Execution duringLease = idem.phased(charge);
    show("alice", "key-3", duringLease);
    check(duringLease.outcome() == Outcome.IN_PROGRESS, "a retry during the lease: in progress (HTTP 409, Retry-After "
        + (duringLease.retryAfter() == null ? "?" : duringLease.retryAfter().toSeconds()) + " s)");
    clock.advance(Duration.ofSeconds(11));
    Completer.Round round = idem.completer().build().runOnce();
    out.printf("   completer round: found %d, recovered %d%n", round.found(), round.recovered());
    Execution afterCompleter = idem.phased(charge);
    show("alice", "key-3", afterCompleter);
    check(afterCompleter.outcome() == Outcome.REPLAYED && afterCompleter.response().status() == 201,
        "the completer finished it; the retry replays 201");
    String derived = store.find(charge.recordKey()).orElseThrow().derive("charge");
    check(callsFor(pool, derived) == 2 && providerCalls.get() == 2,
        "the provider saw the derived key '" + derived + "' twice and charged once (it is idempotent on its keys)");

    section("7. another tenant sends the same key");
    Execution bob = pay(idem, pool, "bob", "key-1", "{\"amount\":1000,\"currency\":\"EUR\"}");
    check(bob.outcome() == Outcome.STORED && !bob.response().bodyAsString().equals(first.response().bodyAsString()),
        "an independent payment, never alice's answer");

    section("8. a day later: the answers expire, and the keys stay taken for the retention");
    clock.advance(Duration.ofHours(25));
    long shrunk = store.purgeAllExpired(clock.instant(), 100);
    out.printf("   purge: %d expired records shrunk to tombstones%n", shrunk);
    Execution late = pay(idem, pool, "alice", "key-1", "{\"amount\":1000,\"currency\":\"EUR\"}");
    check(shrunk >= 5 && late.outcome() == Outcome.KEY_EXPIRED,
        "a retry after the TTL is refused as key_expired, never run again (" + ProblemCode.KEY_EXPIRED.code() + ")");
    clock.advance(OperationPolicy.ofDefaults().retention());
    long deleted = store.purgeAllExpired(clock.instant(), 100);
    out.printf("   %s later, purge: %d tombstones deleted%n", OperationPolicy.ofDefaults().retention(), deleted);
    Execution fresh = pay(idem, pool, "alice", "key-1", "{\"amount\":5,\"currency\":\"EUR\"}");
    check(deleted >= 5 && fresh.outcome() == Outcome.STORED, "after the retention key-1 runs afresh");
  }

  // ---------------------------------------------------------------- the operations

  private static IdempotentRequest request(String tenant, String operation, String key, String json) {
    return IdempotentRequest.of(RecordKey.of(tenant, operation, key), json.getBytes(StandardCharsets.UTF_8),
        "application/json");
  }

  private Execution pay(Idem idem, JdbcConnectionPool pool, String tenant, String key, String json) {
    long amount = Long.parseLong(json.replaceAll(".*\"amount\"\\s*:\\s*(\\d+).*", "$1"));
    Execution e = idem.atomic(request(tenant, PAYMENTS, key, json), tx -> {
      String id = "pay_" + tenant + "_" + key + (amount == 5 ? "_again" : "");
      try (PreparedStatement ps = JdbcTransaction.connectionOf(tx)
          .prepareStatement("INSERT INTO payment (id, tenant, amount) VALUES (?, ?, ?)")) {
        ps.setString(1, id);
        ps.setString(2, tenant);
        ps.setLong(3, amount);
        ps.executeUpdate();
      }
      return StoredResponse.json(201, "{\"id\":\"" + id + "\",\"amount\":" + amount + "}");
    });
    show(tenant, key, e);
    return e;
  }

  private PhasedOperation charges(JdbcConnectionPool pool, AtomicInteger providerCalls,
      AtomicReference<Runnable> crash) {
    return PhasedOperation.builder(CHARGES)
        .inTransaction("create", ctx -> {
          String body = new String(ctx.request().orElseThrow().body(), StandardCharsets.UTF_8);
          return PhaseResult.next(Checkpoint.empty().with("amount", body.replaceAll("\\D", "")));
        })
        .outside("charge", ctx -> {
          String derived = ctx.derivedKey("charge");
          providerCalls.incrementAndGet();
          try (Connection c = pool.getConnection()) {
            // the provider: idempotent on its keys, counting every call
            try (PreparedStatement up = c.prepareStatement(
                "MERGE INTO provider_charge t USING (VALUES (CAST(? AS VARCHAR(300)))) s(k) ON t.derived_key = s.k"
                    + " WHEN MATCHED THEN UPDATE SET calls = t.calls + 1"
                    + " WHEN NOT MATCHED THEN INSERT (derived_key, calls) VALUES (s.k, 1)")) {
              up.setString(1, derived);
              up.executeUpdate();
            }
          }
          Runnable r = crash.getAndSet(null);
          if (r != null) {
            r.run();
          }
          return PhaseResult.next(ctx.checkpoint().with("charge_id", "ch_" + derived));
        })
        .inTransaction("capture", ctx -> PhaseResult.respond(StoredResponse.json(201,
            "{\"charge\":\"" + ctx.checkpoint().require("charge_id") + "\",\"amount\":"
                + ctx.checkpoint().require("amount") + "}")))
        .build();
  }

  /** A killed process would leave its lease in place; the simulated crash released it, so put it back. */
  private static void holdLease(JdbcIdempotencyStore store, RecordKey key, Clock clock) throws Exception {
    IdempotencyRecord r = store.find(key).orElseThrow();
    IdempotencyRecord held = r.withLease("dead-worker", clock.instant().plusSeconds(10), clock.instant());
    store.inTransaction(tx -> store.update(tx, held));
    if (store.find(key).orElseThrow().state() != RecordState.IN_PROGRESS) {
      throw new IllegalStateException("the record should be in progress");
    }
  }

  private static final class WorkerDied extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WorkerDied() {
      super("simulated crash", null, false, false);
    }
  }

  // ---------------------------------------------------------------- printing and checking

  private void section(String title) {
    out.println();
    out.println(title);
  }

  private void show(String tenant, String key, Execution e) {
    StringBuilder line = new StringBuilder("   ").append(tenant).append(" ").append(e.key().operation())
        .append(" Idempotency-Key: ").append(key).append("  ->  ").append(e.outcome());
    if (e.response() != null) {
      line.append(" ").append(e.response().status()).append(" ").append(e.response().bodyAsString());
    }
    if (!e.differingFields().isEmpty()) {
      line.append(" differing ").append(e.differingFields());
    }
    if (e.retryAfter() != null) {
      line.append(" retry after ").append(e.retryAfter().toSeconds()).append(" s");
    }
    out.println(line);
  }

  private void check(boolean ok, String what) {
    out.println((ok ? "   ok    " : "   FAIL  ") + what);
    if (!ok) {
      failures++;
    }
  }

  private static String summarize(List<Execution> executions) {
    java.util.Map<Outcome, Integer> counts = new java.util.EnumMap<>(Outcome.class);
    executions.forEach(e -> counts.merge(e.outcome(), 1, Integer::sum));
    return counts.toString();
  }

  private List<Execution> concurrent(int n, java.util.concurrent.Callable<Execution> call) throws Exception {
    PrintStream real = out;
    out = new PrintStream(java.io.OutputStream.nullOutputStream());
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CyclicBarrier start = new CyclicBarrier(n);
      List<Future<Execution>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        futures.add(pool.submit(() -> {
          start.await(30, TimeUnit.SECONDS);
          return call.call();
        }));
      }
      List<Execution> results = new ArrayList<>();
      for (Future<Execution> f : futures) {
        results.add(f.get(60, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
      out = real;
    }
  }

  private static int callsFor(JdbcConnectionPool pool, String derivedKey) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT calls FROM provider_charge WHERE derived_key = ?")) {
      ps.setString(1, derivedKey);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    }
  }

  private static int count(JdbcConnectionPool pool, String sql) throws SQLException {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getInt(1) : -1;
    }
  }

}
