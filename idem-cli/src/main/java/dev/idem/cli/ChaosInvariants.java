package dev.idem.cli;

import dev.idem.cli.ChaosWorkload.Acked;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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
          left = records.size();
          sample = left == 0 ? "" : records.get(0).toString();
          if (left == 0) {
            break;
          }
        }
      } catch (java.io.IOException | RuntimeException e) {
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
      } catch (java.io.IOException | RuntimeException e) {
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
    AtomicLong leaked = new AtomicLong();
    ConcurrentLinkedQueue<String> examples = new ConcurrentLinkedQueue<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    int i = 0;
    for (Acked a : payments) {
      ChaosInstance target = instances.get(i++ % instances.size());
      pool.execute(() -> {
        JsonNode p = get(target.uri("/payments/" + a.id()), a.tenant(), 200);
        if (p == null || !"captured".equals(ChaosWorkload.text(p, "status"))
            || p.path("amount").asLong() != a.amount()) {
          lost.incrementAndGet();
          ChaosWorkload.note(examples, "payment " + a.id() + " of " + a.tenant() + ": " + p);
        }
        String other = ChaosWorkload.TENANTS.get((ChaosWorkload.TENANTS.indexOf(a.tenant()) + 1)
            % ChaosWorkload.TENANTS.size());
        if (get(target.uri("/payments/" + a.id()), other, 404) == null) {
          leaked.incrementAndGet();
        }
      });
    }
    for (Acked a : refunds) {
      ChaosInstance target = instances.get(i++ % instances.size());
      pool.execute(() -> {
        JsonNode r = get(target.uri("/refunds/" + a.id()), a.tenant(), 200);
        if (r == null || !"succeeded".equals(ChaosWorkload.text(r, "status"))
            || r.path("amount").asLong() != a.amount()) {
          lost.incrementAndGet();
          ChaosWorkload.note(examples, "refund " + a.id() + " of " + a.tenant() + ": " + r);
        }
      });
    }
    pool.shutdown();
    if (!pool.awaitTermination(5, TimeUnit.MINUTES)) {
      pool.shutdownNow();
      lost.incrementAndGet();
      examples.add("the reads did not finish within 5 minutes");
    }
    add("no acknowledged operation lost across kills and restarts", lost.get() == 0,
        payments.size() + " acknowledged payments and " + refunds.size() + " refunds read back: " + lost.get()
        + " missing or changed" + (examples.isEmpty() ? "" : "; " + String.join("; ", examples)));
    if (leaked.get() > 0) {
      workload.tenantViolations.add(leaked.get());
      ChaosWorkload.note(workload.tenantExamples, leaked.get() + " payments were readable by another tenant");
    }
  }

  /** The body of a GET with the tenant's key when it answers {@code expected}, else null. */
  private JsonNode get(URI uri, String tenant, int expected) {
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
            .header("Authorization", "Bearer " + ChaosWorkload.apiKey(tenant)).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() >= 500) {
          continue;
        }
        return r.statusCode() == expected ? JSON.readTree(r.body()) : null;
      } catch (java.io.IOException e) {
        // try again: the instance may be busy
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
    return null;
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
    long debits = count(c, "SELECT COALESCE(SUM(amount), 0) FROM pay_ledger_entry WHERE direction = 'debit'");
    long credits = count(c, "SELECT COALESCE(SUM(amount), 0) FROM pay_ledger_entry WHERE direction = 'credit'");
    add("ledger totals equal provider totals", providerCharged == ledgerCharged && providerRefunded == ledgerRefunded
        && debits == credits, "charged: provider " + providerCharged + ", ledger " + ledgerCharged + "; refunded:"
        + " provider " + providerRefunded + ", ledger " + ledgerRefunded + "; debits " + debits + " = credits "
        + credits);

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

  private void checkOutbox(Connection c, ChaosWebhookSink sink, Map<String, String> endpoints) throws SQLException {
    Map<String, String> status = new HashMap<>();
    Map<String, String> typeOf = new HashMap<>();
    Map<String, String> tenantOf = new HashMap<>();
    for (Map.Entry<String, String> e : endpoints.entrySet()) {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT id, status, event_type FROM idem_outbox WHERE destination = ?")) {
        ps.setString(1, "webhook:" + e.getValue());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String id = rs.getString(1).trim();
            status.put(id, rs.getString(2));
            typeOf.put(id, rs.getString(3));
            tenantOf.put(id, e.getKey());
          }
        }
      }
    }
    Map<String, Long> deliveries = sink.deliveries();
    Map<String, Long> effects = sink.effects();
    long undelivered = status.values().stream().filter(s -> !s.equals("delivered")).count();
    long neverReached = status.keySet().stream().filter(id -> !deliveries.containsKey(id)).count();
    long notApplied = status.keySet().stream().filter(id -> effects.getOrDefault(id, 0L) != 1).count();
    long unknown = deliveries.keySet().stream().filter(id -> !status.containsKey(id)).count();
    long redelivered = deliveries.values().stream().mapToLong(n -> n - 1).sum();
    // One event per decision: the tenant's events of each type match its decided payments and refunds.
    List<String> mismatched = new ArrayList<>();
    for (String tenant : endpoints.keySet()) {
      long[] expected = {
          count(c, "SELECT COUNT(*) FROM pay_payment WHERE status = 'captured' AND tenant = '" + tenant + "'"),
          count(c, "SELECT COUNT(*) FROM pay_payment WHERE status = 'declined' AND tenant = '" + tenant + "'"),
          count(c, "SELECT COUNT(*) FROM pay_refund WHERE status = 'succeeded' AND tenant = '" + tenant + "'")};
      String[] types = {"payment.succeeded", "payment.declined", "refund.succeeded"};
      for (int i = 0; i < types.length; i++) {
        String type = types[i];
        long events = typeOf.entrySet().stream()
            .filter(e -> e.getValue().equals(type) && tenantOf.get(e.getKey()).equals(tenant)).count();
        if (events != expected[i]) {
          mismatched.add(tenant + " " + type + ": " + events + " events for " + expected[i] + " decisions");
        }
      }
    }
    boolean ok = undelivered == 0 && neverReached == 0 && notApplied == 0 && unknown == 0 && mismatched.isEmpty()
        && sink.badSignatures.get() == 0;
    add("every outbox event reached the sink at least once and its inbox counted it once", ok,
        status.size() + " events for the sink's endpoints; not delivered: " + undelivered + "; never reached the sink: "
        + neverReached + "; applied other than once: " + notApplied + "; unknown ids at the sink: " + unknown
        + "; deliveries " + deliveries.values().stream().mapToLong(Long::longValue).sum() + " (" + redelivered
        + " redeliveries); bad signatures: " + sink.badSignatures.get()
        + (mismatched.isEmpty() ? "" : "; " + String.join("; ", mismatched)));
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
