package dev.idem.cli;

import dev.idem.cli.ChaosWorkload.Acked;
import dev.idem.core.RecordKey;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The invariants a chaos run checks once the workload has ended: over HTTP while the instances still run (acknowledged
 * payments readable, records completed), then in the run's database. Each is a {@link Result}; not thread-safe.
 */
final class ChaosInvariants {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** One invariant's outcome. */
  record Result(String name, boolean passed, String detail) {}

  private final List<Result> results = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();

  List<Result> results() {
    return results;
  }

  void add(String name, boolean passed, String detail) {
    results.add(new Result(name, passed, detail));
  }

  /**
   * Waits at most {@code window} until no idempotency record is in progress (asked of the instance's admin route),
   * and records the result.
   */
  long awaitNoneInProgress(ChaosInstance instance, Duration window) throws InterruptedException {
    long deadline = System.nanoTime() + window.toNanos();
    int left = -1;
    String sample = "";
    while (true) {
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(
            instance.uri("/admin/idempotency-records?state=in_progress&limit=500")).timeout(Duration.ofSeconds(10))
            .GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          JsonNode records = JSON.readTree(r.body()).path("records");
          if (!records.isArray()) {
            left = -1;
            sample = "the admin route answered no records array: " + r.body();
          } else {
            left = records.size();
            sample = left == 0 ? "" : records.get(0).toString();
            if (left == 0) {
              break;
            }
          }
        } else {
          sample = "the admin route answered " + r.statusCode();
        }
      } catch (IOException | RuntimeException e) {
        sample = e.toString();
      }
      if (System.nanoTime() - deadline > 0) {
        break;
      }
      TimeUnit.MILLISECONDS.sleep(250);
    }
    add("no record left in progress after the completer's window", left == 0, left == 0
        ? "none in progress within " + window.toSeconds() + " s (lease + 2 x completer interval)"
        : left + " in progress after " + window.toSeconds() + " s, e.g. " + sample);
    return left;
  }

  /**
   * Waits at most {@code window} until no record is uncertain (the completers' reconciliation rounds decide them once
   * the provider answers), then acts as an operator for those left: each is sent back to work through the admin API
   * ({@code POST /admin/idempotency-records/resolve}, action {@code retry}, with a reason), so that the completer
   * resumes it. Returns how many it resolved so.
   */
  int awaitUncertainClosed(ChaosInstance instance, Duration window) throws InterruptedException {
    long deadline = System.nanoTime() + window.toNanos();
    JsonNode left = null;
    while (true) {
      left = uncertain(instance);
      if ((left != null && left.isEmpty()) || System.nanoTime() - deadline > 0) {
        break;
      }
      TimeUnit.MILLISECONDS.sleep(250);
    }
    int resolved = 0;
    if (left != null) {
      for (JsonNode r : left) {
        URI uri = instance.uri("/admin/idempotency-records/resolve?scope=" + encode(r.path("scope").asString())
            + "&operation=" + encode(r.path("operation").asString()) + "&key=" + encode(r.path("key").asString())
            + "&version=" + r.path("version").asLong());
        try {
          HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
              .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                  "{\"action\":\"retry\",\"operator\":\"idem chaos\",\"reason\":\"still uncertain "
                  + window.toSeconds() + " s after the provider came back\"}")).build(),
              HttpResponse.BodyHandlers.ofString());
          if (answer.statusCode() == 200) {
            resolved++;
          }
        } catch (IOException e) {
          // counted as left: the invariant on uncertain records reports it
        }
      }
    }
    return resolved;
  }

  /** The uncertain records (at most 500), or null when the admin route could not be read. */
  private JsonNode uncertain(ChaosInstance instance) throws InterruptedException {
    try {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(
          instance.uri("/admin/idempotency-records?state=uncertain&limit=500")).timeout(Duration.ofSeconds(10))
          .GET().build(), HttpResponse.BodyHandlers.ofString());
      JsonNode records = r.statusCode() == 200 ? JSON.readTree(r.body()).path("records") : null;
      return records != null && records.isArray() ? records : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /**
   * The provider-down mode's two invariants, in the run's database: no record that was ever uncertain was executed
   * twice at the provider (at most one provider charge or refund with the key its record derives, and for a payment at
   * most one charge of its intent's account), and every one was closed by the end, by a reconciler or an operator
   * (its last audit entry says which).
   */
  void checkUncertain(Connection c, int resolvedByTheRun, boolean expected) throws SQLException {
    Map<String, String[]> ever = new LinkedHashMap<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT r.scope, r.operation,"
        + " r.idem_key, r.state, r.key_nonce, r.checkpoint, (SELECT a.actor FROM idem_record_audit a WHERE"
        + " a.scope = r.scope AND a.operation = r.operation AND a.idem_key = r.idem_key ORDER BY a.version DESC"
        + " FETCH FIRST 1 ROWS ONLY) FROM idem_record r WHERE r.state = 'uncertain' OR EXISTS (SELECT 1 FROM"
        + " idem_record_audit a WHERE a.scope = r.scope AND a.operation = r.operation AND a.idem_key = r.idem_key"
        + " AND a.from_state = 'uncertain')")) {
      while (rs.next()) {
        ever.put(rs.getString(1) + "\n" + rs.getString(2) + "\n" + rs.getString(3), new String[] {rs.getString(1),
            rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7)});
      }
    }
    long twice = 0;
    long atProvider = 0;
    long repeatedCalls = 0;
    long byReconciler = 0;
    long byOperator = 0;
    List<String> left = new ArrayList<>();
    List<String> examples = new ArrayList<>();
    for (String[] r : ever.values()) {
      boolean payment = r[1].equals("POST /payments");
      String providerKey = RecordKey.of(r[0], r[1], r[2]).derive(payment ? "charge" : "refund", r[4]);
      String table = payment ? "pay_provider_charge" : "pay_provider_refund";
      long[] rows = keyRows(c, table, providerKey);
      atProvider += rows[0] > 0 ? 1 : 0;
      repeatedCalls += rows[1];
      long executions = rows[0];
      if (payment) {
        String account = JSON.readTree(r[5] == null ? "{}" : r[5]).path("account_id").asString(null);
        if (account != null) {
          executions = Math.max(executions, count(c, "pay_provider_charge WHERE account_id = ?", account));
        }
      }
      if (executions > 1) {
        twice++;
        if (examples.size() < 3) {
          examples.add(r[0] + " " + r[1] + " " + r[2] + ": " + executions + " executions");
        }
      }
      if (r[3].equals("uncertain")) {
        left.add(r[0] + " " + r[1] + " " + r[2]);
      } else if (r[6] != null && r[6].startsWith("reconciler")) {
        byReconciler++;
      } else {
        byOperator++;
      }
    }
    add("no uncertain record was executed twice at the provider", twice == 0, ever.size()
        + " records became uncertain; " + atProvider + " of them had reached the provider (their call applied, its"
        + " answer lost), each once; " + repeatedCalls + " repeated calls answered from the provider's key; executed"
        + " twice: " + twice + (examples.isEmpty() ? "" : " " + String.join("; ", examples)));
    add("every uncertain record was closed by reconciliation or an operator", left.isEmpty()
        && (!expected || !ever.isEmpty()), ever.size() + " uncertain records: " + byReconciler
        + " closed by a reconciler, " + byOperator + " by an operator (" + resolvedByTheRun + " sent back to work by"
        + " this run, as an operator, after the reconciliation window); still uncertain: " + left.size()
        + (left.isEmpty() ? "" : " e.g. " + left.get(0)) + (expected && ever.isEmpty()
            ? "; none became uncertain, though the provider was down" : ""));
  }

  /** Rows at the provider with {@code key}, and their repeated calls. */
  private static long[] keyRows(Connection c, String table, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*), COALESCE(SUM(duplicate_attempts), 0) FROM "
        + table + " WHERE idempotency_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new long[] {rs.getLong(1), rs.getLong(2)};
      }
    }
  }

  private static long count(Connection c, String from, String value) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + from)) {
      ps.setString(1, value);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Waits (bounded) until the outbox has nothing pending; returns the last stats read. */
  JsonNode awaitOutboxDrained(ChaosInstance instance, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    JsonNode stats = null;
    while (System.nanoTime() - deadline < 0) {
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(instance.uri("/admin/outbox/stats"))
            .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          stats = JSON.readTree(r.body());
          if (stats.path("counts").path("pending").asLong(-1) == 0) {
            return stats;
          }
        }
      } catch (IOException | RuntimeException e) {
        // the next round asks again
      }
      TimeUnit.MILLISECONDS.sleep(500);
    }
    return stats;
  }

  /** Every 2xx payment and refund readable by its tenant, and not by another. */
  void checkAcknowledgedReadable(ChaosWorkload workload, List<ChaosInstance> instances)
      throws InterruptedException {
    List<Acked> payments;
    List<Acked> refunds;
    synchronized (workload.ackedPayments) {
      payments = List.copyOf(workload.ackedPayments);
    }
    synchronized (workload.ackedRefunds) {
      refunds = List.copyOf(workload.ackedRefunds);
    }
    AtomicLong lost = new AtomicLong();
    AtomicLong unreachable = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong leaked = new AtomicLong();
    ConcurrentLinkedQueue<String> examples = new ConcurrentLinkedQueue<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    int i = 0;
    for (Acked a : payments) {
      ChaosInstance target = instances.get(i++ % instances.size());
      pool.execute(guarded(failed, examples, "payment " + a.id(), () -> {
        Read p = get(target.uri("/payments/" + a.id()), a.tenant(), 200);
        if (p.outcome() == Read.Outcome.UNREACHABLE) {
          unreachable.incrementAndGet();
          ChaosWorkload.note(examples, "payment " + a.id() + " of " + a.tenant() + ": unreachable: " + p.detail());
        } else if (p.outcome() != Read.Outcome.OK || !"captured".equals(ChaosWorkload.text(p.body(), "status"))
            || p.body().path("amount").asLong() != a.amount()) {
          lost.incrementAndGet();
          ChaosWorkload.note(examples, "payment " + a.id() + " of " + a.tenant() + ": " + p.detail());
        }
        String other = ChaosWorkload.TENANTS.get((ChaosWorkload.TENANTS.indexOf(a.tenant()) + 1)
            % ChaosWorkload.TENANTS.size());
        Read probe = get(target.uri("/payments/" + a.id()), other, 404);
        if (probe.outcome() == Read.Outcome.UNREACHABLE) {
          unreachable.incrementAndGet();
          ChaosWorkload.note(examples, "payment " + a.id() + " read by " + other + ": unreachable: "
              + probe.detail());
        } else if (probe.status() == 200) {
          leaked.incrementAndGet();
        } else if (probe.outcome() != Read.Outcome.OK) {
          failed.incrementAndGet();
          ChaosWorkload.note(examples, "payment " + a.id() + " read by " + other + ": " + probe.detail());
        }
      }));
    }
    for (Acked a : refunds) {
      ChaosInstance target = instances.get(i++ % instances.size());
      pool.execute(guarded(failed, examples, "refund " + a.id(), () -> {
        Read r = get(target.uri("/refunds/" + a.id()), a.tenant(), 200);
        if (r.outcome() == Read.Outcome.UNREACHABLE) {
          unreachable.incrementAndGet();
          ChaosWorkload.note(examples, "refund " + a.id() + " of " + a.tenant() + ": unreachable: " + r.detail());
        } else if (r.outcome() != Read.Outcome.OK || !"succeeded".equals(ChaosWorkload.text(r.body(), "status"))
            || r.body().path("amount").asLong() != a.amount()) {
          lost.incrementAndGet();
          ChaosWorkload.note(examples, "refund " + a.id() + " of " + a.tenant() + ": " + r.detail());
        }
      }));
    }
    pool.shutdown();
    if (!pool.awaitTermination(5, TimeUnit.MINUTES)) {
      pool.shutdownNow();
      failed.incrementAndGet();
      examples.add("the reads did not finish within 5 minutes");
    }
    add("no acknowledged operation lost across kills and restarts",
        lost.get() == 0 && unreachable.get() == 0 && failed.get() == 0,
        payments.size() + " acknowledged payments and " + refunds.size() + " refunds read back: " + lost.get()
        + " missing or changed; unreachable reads: " + unreachable.get() + "; failed reads or checks: "
        + failed.get() + (examples.isEmpty() ? "" : "; " + String.join("; ", examples)));
    if (leaked.get() > 0) {
      workload.tenantViolations.add(leaked.get());
      ChaosWorkload.note(workload.tenantExamples, leaked.get() + " payments were readable by another tenant");
    }
  }

  /** A read-back task whose every failure, unchecked or not, is counted instead of vanishing in the executor. */
  private static Runnable guarded(AtomicLong failed, ConcurrentLinkedQueue<String> examples, String what,
      Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (Throwable e) {
        failed.incrementAndGet();
        ChaosWorkload.note(examples, what + ": the check failed with " + e);
      }
    };
  }

  /** The outcome of one read-back: the expected status with a JSON body, another answer, or no answer at all. */
  record Read(Outcome outcome, int status, JsonNode body, String detail) {
    enum Outcome { OK, WRONG_STATUS, UNREACHABLE }
  }

  /**
   * A GET with the tenant's key. A 5xx or a transport failure is tried again (five attempts, with a short backoff);
   * an answer that is neither the expected status nor 5xx, or an expected status without a JSON body, is
   * {@code WRONG_STATUS}.
   */
  private Read get(URI uri, String tenant, int expected) {
    String last = "no attempt";
    for (int attempt = 0; attempt < 5; attempt++) {
      if (attempt > 0) {
        try {
          TimeUnit.MILLISECONDS.sleep(200L * attempt);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return new Read(Read.Outcome.UNREACHABLE, 0, null, "interrupted");
        }
      }
      HttpResponse<byte[]> r;
      try {
        r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
            .header("Authorization", "Bearer " + ChaosWorkload.apiKey(tenant)).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
      } catch (IOException e) {
        last = e.toString();
        continue;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return new Read(Read.Outcome.UNREACHABLE, 0, null, "interrupted");
      }
      String text = new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
      if (r.statusCode() >= 500) {
        last = r.statusCode() + " " + text;
        continue;
      }
      if (r.statusCode() != expected) {
        return new Read(Read.Outcome.WRONG_STATUS, r.statusCode(), null, r.statusCode() + " " + text);
      }
      try {
        return new Read(Read.Outcome.OK, r.statusCode(), JSON.readTree(r.body()), text);
      } catch (RuntimeException e) {
        return new Read(Read.Outcome.WRONG_STATUS, r.statusCode(), null, r.statusCode() + " not JSON: " + text);
      }
    }
    return new Read(Read.Outcome.UNREACHABLE, 0, null, "5 attempts, last: " + last);
  }

  /** The checks in the database, run after every instance has stopped. */
  void checkDatabase(Connection c, ChaosWorkload workload, ChaosWebhookSink sink, Map<String, String> endpoints)
      throws SQLException {
    // 1. at most one provider charge per intent: every intent has an account of its own.
    long doubleCharged = count(c, "SELECT COUNT(*) FROM (SELECT account_id FROM pay_provider_charge"
        + " GROUP BY account_id HAVING COUNT(*) > 1) x");
    long doublePayments = count(c, "SELECT COUNT(*) FROM (SELECT tenant, account_id FROM pay_payment"
        + " GROUP BY tenant, account_id HAVING COUNT(*) > 1) x");
    long orphanCharges = count(c, "SELECT COUNT(*) FROM pay_provider_charge ch WHERE NOT EXISTS"
        + " (SELECT 1 FROM pay_payment p WHERE p.provider_charge_id = ch.id)");
    long orphanRefunds = count(c, "SELECT COUNT(*) FROM pay_provider_refund pr WHERE NOT EXISTS"
        + " (SELECT 1 FROM pay_refund r WHERE r.provider_refund_id = pr.id)");
    long charges = count(c, "SELECT COUNT(*) FROM pay_provider_charge");
    long duplicateAttempts = count(c, "SELECT COALESCE(SUM(duplicate_attempts), 0) FROM pay_provider_charge");
    add("every intent has at most one provider charge",
        doubleCharged == 0 && doublePayments == 0 && orphanCharges == 0 && orphanRefunds == 0,
        charges + " provider charges (" + duplicateAttempts + " repeated charge calls answered from the provider's"
        + " key); accounts charged twice: " + doubleCharged + "; intents with two payments: " + doublePayments
        + "; charges without their payment: " + orphanCharges + "; provider refunds without their refund: "
        + orphanRefunds);

    // 2. one pair of ledger entries per acknowledged payment (and per captured payment and succeeded refund).
    Map<String, long[]> pairs = new HashMap<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
        "SELECT reference_id, direction, amount FROM pay_ledger_entry")) {
      while (rs.next()) {
        long[] p = pairs.computeIfAbsent(rs.getString(1), k -> new long[4]);
        int side = rs.getString(2).equals("debit") ? 0 : 1;
        p[side]++;
        p[side + 2] += rs.getLong(3);
      }
    }
    List<Acked> acked;
    synchronized (workload.ackedPayments) {
      acked = List.copyOf(workload.ackedPayments);
    }
    List<String> bad = new ArrayList<>();
    for (Acked a : acked) {
      long[] p = pairs.get(a.id());
      if (p == null || p[0] != 1 || p[1] != 1 || p[2] != a.amount() || p[3] != a.amount()) {
        bad.add(a.id() + (p == null ? " none" : " " + p[0] + " debit(s) " + p[1] + " credit(s)"));
      }
    }
    Map<String, Long> decided = new HashMap<>();
    for (String table : List.of("pay_payment WHERE status = 'captured'", "pay_refund WHERE status = 'succeeded'")) {
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT id, amount FROM " + table)) {
        while (rs.next()) {
          decided.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    for (Map.Entry<String, Long> e : decided.entrySet()) {
      long[] p = pairs.get(e.getKey());
      if (p == null || p[0] != 1 || p[1] != 1 || p[2] != e.getValue() || p[3] != e.getValue()) {
        bad.add(e.getKey() + " (in the database)");
      }
    }
    Set<String> unbooked = new HashSet<>(pairs.keySet());
    unbooked.removeAll(decided.keySet());
    add("every acknowledged payment has exactly one pair of ledger entries", bad.isEmpty() && unbooked.isEmpty(),
        acked.size() + " acknowledged payments, " + decided.size() + " captured payments and succeeded refunds, "
        + pairs.size() + " pairs booked; wrong: " + bad.size() + (bad.isEmpty() ? "" : " " + head(bad))
        + "; pairs without a captured payment or succeeded refund: " + unbooked.size());

    // 3. ledger totals equal provider totals.
    long providerCharged = count(c,
        "SELECT COALESCE(SUM(amount), 0) FROM pay_provider_charge WHERE status = 'succeeded'");
    long providerRefunded = count(c, "SELECT COALESCE(SUM(amount), 0) FROM pay_provider_refund");
    long ledgerCharged = count(c, "SELECT COALESCE(SUM(amount), 0) FROM pay_ledger_entry"
        + " WHERE reference_type = 'payment' AND direction = 'debit'");
    long ledgerRefunded = count(c, "SELECT COALESCE(SUM(amount), 0) FROM pay_ledger_entry"
        + " WHERE reference_type = 'refund' AND direction = 'credit'");
    long chargesUsedTwice = count(c, "SELECT COUNT(*) FROM (SELECT provider_charge_id FROM pay_payment"
        + " WHERE provider_charge_id IS NOT NULL GROUP BY provider_charge_id HAVING COUNT(*) > 1) x");
    long refundsUsedTwice = count(c, "SELECT COUNT(*) FROM (SELECT provider_refund_id FROM pay_refund"
        + " WHERE provider_refund_id IS NOT NULL GROUP BY provider_refund_id HAVING COUNT(*) > 1) x");
    add("ledger totals equal provider totals", providerCharged == ledgerCharged && providerRefunded == ledgerRefunded
        && chargesUsedTwice == 0 && refundsUsedTwice == 0, "charged: provider " + providerCharged + ", ledger "
        + ledgerCharged + "; refunded: provider " + providerRefunded + ", ledger " + ledgerRefunded
        + "; provider charges behind two payments: " + chargesUsedTwice + "; provider refunds behind two refunds: "
        + refundsUsedTwice);

    // 4. a payment or refund the provider refused for good ended failed: never booked, never charged or refunded.
    checkRefusals(c, workload);

    // 5 (database side). nothing in progress.
    long inProgress = count(c, "SELECT COUNT(*) FROM idem_record WHERE state = 'in_progress'");
    if (inProgress > 0) {
      add("no record in progress in the database at the end", false, inProgress + " records in progress");
    }

    // 6. every event for the sink's endpoints delivered, each applied once.
    checkOutbox(c, sink, endpoints);

    // 7. no response crossed tenants: every object shown to a tenant is that tenant's.
    Map<String, String> owner = new HashMap<>();
    for (String table : List.of("pay_payment", "pay_refund")) {
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT id, tenant FROM " + table)) {
        while (rs.next()) {
          owner.put(rs.getString(1), rs.getString(2));
        }
      }
    }
    long checked = 0;
    for (String[] s : workload.shown) {
      checked++;
      String o = owner.get(s[1]);
      if (!s[0].equals(o)) {
        workload.tenantViolations.increment();
        ChaosWorkload.note(workload.tenantExamples, s[0] + " was shown " + s[1] + " (key " + s[2] + "), owned by "
            + o);
      }
    }
    add("no response ever crossed tenants", workload.tenantViolations.sum() == 0, checked
        + " objects shown in answers and events, " + workload.crossTenantProbes.sum() + " refunds of another tenant's"
        + " payment (404 expected), " + workload.sharedKeys.sum() + " keys reused by another tenant; violations: "
        + workload.tenantViolations.sum() + (workload.tenantExamples.isEmpty() ? ""
        : " " + String.join("; ", workload.tenantExamples)));
  }

  /**
   * Every payment and refund a 422 {@code PROVIDER.*} answer named is {@code failed} in the database, has no ledger
   * entry and no provider charge or refund; and no {@code failed} payment or refund has either.
   */
  void checkRefusals(Connection c, ChaosWorkload workload) throws SQLException {
    Map<String, String> failed = new HashMap<>();
    List<String> wrong = new ArrayList<>();
    for (String[] q : List.of(
        new String[] {"payment", "SELECT id, status, provider_charge_id FROM pay_payment"},
        new String[] {"refund", "SELECT id, status, provider_refund_id FROM pay_refund"})) {
      Set<String> refused = q[0].equals("payment") ? workload.refusedPayments : workload.refusedRefunds;
      Set<String> seen = new HashSet<>();
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(q[1])) {
        while (rs.next()) {
          String id = rs.getString(1);
          boolean isFailed = rs.getString(2).equals("failed");
          if (isFailed) {
            failed.put(id, q[0]);
            if (rs.getString(3) != null) {
              wrong.add(q[0] + " " + id + " failed but has provider " + (q[0].equals("payment") ? "charge " : "refund ")
                  + rs.getString(3));
            }
          }
          if (refused.contains(id)) {
            seen.add(id);
            if (!isFailed) {
              wrong.add(q[0] + " " + id + " was refused but is " + rs.getString(2));
            }
          }
        }
      }
      for (String id : refused) {
        if (!seen.contains(id)) {
          wrong.add(q[0] + " " + id + " was refused but is not in the database");
        }
      }
    }
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
        "SELECT DISTINCT reference_id FROM pay_ledger_entry")) {
      while (rs.next()) {
        if (failed.containsKey(rs.getString(1))) {
          wrong.add(failed.get(rs.getString(1)) + " " + rs.getString(1) + " failed but is booked in the ledger");
        }
      }
    }
    add("refused payments and refunds are failed, never booked nor charged", wrong.isEmpty(),
        workload.refusedPaymentAnswers.sum() + " refused payment answers and " + workload.refusedRefundAnswers.sum()
        + " refused refund answers (422 PROVIDER.*, replays included) naming " + workload.refusedPayments.size()
        + " payments and " + workload.refusedRefunds.size() + " refunds; " + failed.size() + " failed in the"
        + " database; wrong: " + wrong.size() + (wrong.isEmpty() ? "" : " " + head(wrong)));
  }

  /**
   * Per object, not per count (where a lost event and a duplicate would cancel out): every captured or declined
   * payment and every succeeded refund has exactly one outbox row for its tenant's sink endpoint, of the matching
   * type; no row names an aggregate that is not decided that way; every row was delivered and applied once.
   */
  private void checkOutbox(Connection c, ChaosWebhookSink sink, Map<String, String> endpoints) throws SQLException {
    Map<String, String> expectedType = new HashMap<>();
    for (String[] q : List.of(
        new String[] {"payment", "SELECT tenant, id, status FROM pay_payment WHERE status IN ('captured', 'declined')"},
        new String[] {"refund", "SELECT tenant, id, status FROM pay_refund WHERE status = 'succeeded'"})) {
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(q[1])) {
        while (rs.next()) {
          String type = switch (rs.getString(3)) {
            case "captured" -> "payment.succeeded";
            case "declined" -> "payment.declined";
            default -> "refund.succeeded";
          };
          expectedType.put(rs.getString(1) + " " + q[0] + " " + rs.getString(2), type);
        }
      }
    }
    Map<String, String> status = new HashMap<>();
    Map<String, List<String>> rowsPerObject = new HashMap<>();
    for (Map.Entry<String, String> e : endpoints.entrySet()) {
      try (PreparedStatement ps = c.prepareStatement("SELECT id, status, event_type, aggregate_type, aggregate_id"
          + " FROM idem_outbox WHERE destination = ?")) {
        ps.setString(1, "webhook:" + e.getValue());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            status.put(rs.getString(1).trim(), rs.getString(2));
            rowsPerObject.computeIfAbsent(e.getKey() + " " + rs.getString(4) + " " + rs.getString(5),
                k -> new ArrayList<>()).add(rs.getString(3));
          }
        }
      }
    }
    List<String> wrong = new ArrayList<>();
    for (Map.Entry<String, String> e : expectedType.entrySet()) {
      List<String> rows = rowsPerObject.getOrDefault(e.getKey(), List.of());
      if (rows.size() != 1 || !rows.get(0).equals(e.getValue())) {
        wrong.add(e.getKey() + ": expected one " + e.getValue() + ", found " + rows);
      }
    }
    for (Map.Entry<String, List<String>> e : rowsPerObject.entrySet()) {
      if (!expectedType.containsKey(e.getKey())) {
        wrong.add(e.getKey() + ": events " + e.getValue() + " for an undecided object");
      }
    }
    Map<String, Long> deliveries = sink.deliveries();
    Map<String, Long> effects = sink.effects();
    long undelivered = status.values().stream().filter(s -> !s.equals("delivered")).count();
    long neverReached = status.keySet().stream().filter(id -> !deliveries.containsKey(id)).count();
    long notApplied = status.keySet().stream().filter(id -> effects.getOrDefault(id, 0L) != 1).count();
    long unknown = deliveries.keySet().stream().filter(id -> !status.containsKey(id)).count();
    long redelivered = deliveries.values().stream().mapToLong(n -> n - 1).sum();
    boolean ok = undelivered == 0 && neverReached == 0 && notApplied == 0 && unknown == 0 && wrong.isEmpty()
        && sink.badSignatures.get() == 0;
    add("every outbox event reached the sink at least once and its inbox counted it once", ok,
        status.size() + " events for the sink's endpoints, " + expectedType.size() + " decided objects; objects"
        + " without exactly one event of their type, or events of undecided objects: " + wrong.size()
        + (wrong.isEmpty() ? "" : " (" + head(wrong) + ")") + "; not delivered: " + undelivered
        + "; never reached the sink: " + neverReached + "; applied other than once: " + notApplied
        + "; unknown ids at the sink: " + unknown + "; deliveries "
        + deliveries.values().stream().mapToLong(Long::longValue).sum() + " (" + redelivered
        + " redeliveries); bad signatures: " + sink.badSignatures.get());
  }

  /** A value the run must never write to a log or a table, and its name in findings (the value is never shown). */
  record Secret(String name, String value) {}

  /**
   * Scans every {@code *.log} file in {@code dir} and every text or binary column of every table in the run's
   * database for the secrets; they may appear nowhere (the endpoints' signing secrets are sealed at rest). Findings
   * name the table and column, or the file and line, never the secret.
   */
  void checkSecretsAbsent(Connection c, java.nio.file.Path dir, List<Secret> secrets) throws SQLException,
      IOException {
    List<String> findings = new ArrayList<>();
    long files = 0;
    try (java.util.stream.Stream<java.nio.file.Path> list = java.nio.file.Files.list(dir)) {
      for (java.nio.file.Path file : list.filter(f -> f.getFileName().toString().endsWith(".log")).sorted()
          .toList()) {
        files++;
        List<String> lines = java.nio.file.Files.readAllLines(file,
            java.nio.charset.StandardCharsets.ISO_8859_1);
        for (int n = 0; n < lines.size(); n++) {
          for (Secret secret : secrets) {
            if (lines.get(n).contains(secret.value())) {
              findings.add(file.getFileName() + ":" + (n + 1) + " holds " + secret.name());
            }
          }
        }
      }
    }
    List<String[]> columns = new ArrayList<>();
    boolean postgres = c.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT)
        .contains("postgres");
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT table_name, column_name,"
        + " data_type FROM information_schema.columns WHERE table_schema = "
        + (postgres ? "current_schema()" : "'PUBLIC'") + " ORDER BY table_name, ordinal_position")) {
      while (rs.next()) {
        String type = rs.getString(3).toLowerCase(java.util.Locale.ROOT);
        boolean binary = type.contains("bytea") || type.contains("binary") || type.contains("blob");
        boolean text = type.contains("char") || type.contains("text") || type.contains("clob")
            || type.contains("json");
        if (binary || text) {
          columns.add(new String[] {rs.getString(1), rs.getString(2), binary ? "binary" : "text"});
        }
      }
    }
    for (String[] col : columns) {
      String where = col[0] + "." + col[1];
      String column = quote(col[1]);
      String condition = col[2].equals("binary") && postgres ? "position(? in " + column + ") > 0"
          : col[2].equals("binary") ? "POSITION(?, UTF8TOSTRING(" + column + ")) > 0"
          : "POSITION(?, " + column + ") > 0";
      if (postgres && col[2].equals("text")) {
        condition = "strpos(" + column + "::text, ?) > 0";
      }
      String sql = "SELECT COUNT(*) FROM " + quote(col[0]) + " WHERE " + condition;
      for (Secret secret : secrets) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          if (postgres && col[2].equals("binary")) {
            ps.setBytes(1, secret.value().getBytes(java.nio.charset.StandardCharsets.UTF_8));
          } else {
            ps.setString(1, secret.value());
          }
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            long rows = rs.getLong(1);
            if (rows > 0) {
              findings.add(where + " holds " + secret.name() + " in " + rows + " row(s)");
            }
          }
        }
      }
    }
    add("no secret or Authorization header in the logs or the tables", findings.isEmpty(),
        secrets.size() + " secrets looked for in " + files + " log file(s) and " + columns.size()
        + " text and binary columns; found: " + findings.size()
        + (findings.isEmpty() ? "" : " " + head(findings)));
  }

  private static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  private static String head(List<String> list) {
    return String.join(", ", list.subList(0, Math.min(10, list.size())));
  }

  static long count(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
