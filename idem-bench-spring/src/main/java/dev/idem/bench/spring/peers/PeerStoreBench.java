package dev.idem.bench.spring.peers;

import ch.qos.logback.classic.Level;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.bench.db.LoadPass;
import dev.idem.bench.db.PgCounters;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.UuidV7;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Idem's store next to the peers' JDBC duplicate stores on PostgreSQL, in one run, alternating, on pre-filled tables:
 * Apache Camel's {@code JdbcMessageIdRepository} and Spring Integration's {@code JdbcMetadataStore}, against a bare
 * business transaction and the same record writes and reads by hand.
 *
 * <p>New keys (claim+complete): (a) the bare two-insert business transaction; (b) a claim and a completion with a
 * stored answer by hand, two auto-commit statements on Idem's record table; (c) the same through the
 * {@code IdempotencyStore} SPI of {@code JdbcIdempotencyStore} (claim: an in-progress record inserted as the only,
 * last write of its transaction; complete: the conditional update to completed with the answer, the last write of a
 * second one; on PostgreSQL each goes with its COMMIT), and
 * (c2) with the answers sealed ({@code EncryptedIdempotencyStore}); (b2, c3, c4) the same three for a record
 * completed from its first write, as atomic mode writes it (one insert, with the COMMIT); (d) Spring Integration's
 * {@code putIfAbsent(key, value)} in one transaction, its idempotent receiver's use; (e) Camel's {@code add} then
 * {@code confirm}, what its idempotent consumer calls with {@code eager=true} (its default), and (e2) with
 * {@code eager=false}: {@code contains} before the work, {@code add} and {@code confirm} after it. The peers store a
 * key (and Spring Integration a short value), not an answer.
 *
 * <p>Keys already there (the duplicate path), random among the pre-filled ones: (f) a primary-key read of a record
 * with its answer by hand; (g) Idem's replay read, {@code find} of a completed record with its answer, and (g2) of a
 * sealed one, opened; (h) Spring Integration's {@code get}; (i) Camel's {@code contains}.
 *
 * <pre>java -jar idem-bench-spring/target/bench-spring.jar dev.idem.bench.spring.peers.PeerStoreBench --threads 8
 *     --seconds 5 --passes 5 --prefill 100000 [--only a,b,c,...] [--url jdbc:postgresql://127.0.0.1:5432/test
 *     --user postgres]</pre>
 */
public final class PeerStoreBench {
  private static final String SCOPE = "peers";
  private static final String RAW_SCOPE = "peers-raw";
  private static final String OPERATION = "POST /payments";
  private static final String RECORDS = "bench_peer_record";
  private static final String CAMEL_TABLE = "bench_peer_camel";
  private static final String SI_PREFIX = "BENCH_PEER_INT_";
  private static final String SI_SCHEMA = "org/springframework/integration/jdbc/schema-postgresql.sql";
  private static final Fingerprint FINGERPRINT = Fingerprint.ofHash("0".repeat(64));
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofDays(1);
  private static final String HEADERS = "{\"content-type\":[\"application/json\"]}";

  /** The ratios reported: numerator, denominator (variant codes). */
  private static final String[][] RATIOS = {
      {"c", "b"}, {"c2", "b"}, {"c3", "b2"}, {"c4", "b2"}, {"d", "b"}, {"e", "b"}, {"e2", "b"},
      {"c", "d"}, {"c", "e"}, {"c", "e2"}, {"c2", "d"}, {"c2", "e"}, {"c2", "e2"},
      {"c3", "d"}, {"c3", "e"}, {"c3", "e2"}, {"c4", "d"}, {"c4", "e"}, {"c4", "e2"},
      {"g", "f"}, {"g2", "f"}, {"h", "f"}, {"i", "f"},
      {"g", "h"}, {"g", "i"}, {"g2", "h"}, {"g2", "i"}};

  private final HikariDataSource ds;
  private final int prefill;
  private final JdbcIdempotencyStore store;
  private final EncryptedIdempotencyStore sealed;
  private final JdbcMetadataStore metadata;
  private final TransactionTemplate transaction;
  private final JdbcMessageIdRepository camel;

  private PeerStoreBench(HikariDataSource ds, int prefill) throws Exception {
    this.ds = ds;
    this.prefill = prefill;
    dropTables();
    this.store = JdbcIdempotencyStore.builder(ds).name("peers").table(RECORDS).createSchemaIfMissing(true).build();
    this.sealed = EncryptedIdempotencyStore.wrap(store, Encryption.with(Keyring.generate("peers")),
        IdemListener.NOOP);
    execute(metadataTableDdl());
    this.metadata = new JdbcMetadataStore(ds);
    metadata.setTablePrefix(SI_PREFIX);
    metadata.afterPropertiesSet();
    metadata.start();
    this.transaction = new TransactionTemplate(new DataSourceTransactionManager(ds));
    this.camel = new JdbcMessageIdRepository(ds, SCOPE);
    camel.setTableName(CAMEL_TABLE);
    camel.start();
  }

  public static void main(String[] args) throws Exception {
    ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).setLevel(Level.WARN);
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String url = opts.getOrDefault("url", "jdbc:postgresql://127.0.0.1:5432/test");
    int threads = Integer.parseInt(opts.getOrDefault("threads", "8"));
    int seconds = Integer.parseInt(opts.getOrDefault("seconds", "5"));
    int passes = Integer.parseInt(opts.getOrDefault("passes", "5"));
    int prefill = Integer.parseInt(opts.getOrDefault("prefill", "100000"));
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(opts.getOrDefault("user", "postgres"));
    config.setMaximumPoolSize(threads);
    config.setMinimumIdle(threads);
    config.setPoolName("bench-peers");
    try (HikariDataSource ds = new HikariDataSource(config)) {
      PeerStoreBench bench = new PeerStoreBench(ds, prefill);
      bench.prepare();
      Map<String, LoadPass.Op> variants = bench.variants(opts.get("only"));
      System.out.printf(Locale.ROOT, "# peer stores on %s, %d threads, %d s per measurement, %d passes, %d pre-filled"
          + " keys per store, load average %s%n", url, threads, seconds, passes, prefill, loadAverage());
      PgCounters counters = new PgCounters(ds, threads);
      for (Map.Entry<String, LoadPass.Op> v : variants.entrySet()) {
        LoadPass.run(v.getKey() + " (priming, discarded)", threads, seconds, counters, v.getValue());
      }
      Map<String, List<LoadPass.Result>> results = new LinkedHashMap<>();
      for (int pass = 1; pass <= passes; pass++) {
        for (Map.Entry<String, LoadPass.Op> v : variants.entrySet()) {
          results.computeIfAbsent(v.getKey(), k -> new ArrayList<>())
              .add(LoadPass.run(v.getKey() + ", pass " + pass, threads, seconds, counters, v.getValue()));
        }
      }
      System.out.printf(Locale.ROOT, "# load average after the run: %s%n", loadAverage());
      report(results);
      bench.camel.stop();
      bench.metadata.stop();
    }
  }

  private Map<String, LoadPass.Op> variants(String only) {
    Map<String, LoadPass.Op> variants = new LinkedHashMap<>();
    variants.put("a bare tx", this::bare);
    variants.put("b raw claim+complete", this::rawClaimComplete);
    variants.put("b2 raw one-step", this::rawOneStep);
    variants.put("c idem claim+complete", () -> claimComplete(store));
    variants.put("c2 idem claim+complete enc", () -> claimComplete(sealed));
    variants.put("c3 idem one-step", () -> oneStep(store));
    variants.put("c4 idem one-step enc", () -> oneStep(sealed));
    variants.put("d si putIfAbsent", this::siPutIfAbsent);
    variants.put("e camel add+confirm", () -> camelNewKey(false));
    variants.put("e2 camel contains+add+confirm", () -> camelNewKey(true));
    variants.put("f raw read", this::rawRead);
    variants.put("g idem replay", () -> replay(store, "plain-"));
    variants.put("g2 idem replay enc", () -> replay(sealed, "sealed-"));
    variants.put("h si get", this::siGet);
    variants.put("i camel contains", this::camelContains);
    if (only != null) {
      List<String> keep = List.of(only.split(","));
      variants.keySet().removeIf(name -> !keep.contains(code(name)));
    }
    return variants;
  }

  // ------------------------------------------------------------------ set-up

  private void dropTables() throws SQLException {
    for (String table : List.of("bench_peer_ledger", "bench_peer_payment", RECORDS, CAMEL_TABLE,
        SI_PREFIX + "METADATA_STORE")) {
      execute("DROP TABLE IF EXISTS " + table);
    }
  }

  /** Spring Integration's own DDL for its metadata table, from the schema script in its jar, with our prefix. */
  private static String metadataTableDdl() throws IOException {
    try (InputStream in = JdbcMetadataStore.class.getClassLoader().getResourceAsStream(SI_SCHEMA)) {
      if (in == null) {
        throw new IllegalStateException("no " + SI_SCHEMA + " on the class path");
      }
      String script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      Matcher m = Pattern.compile("CREATE TABLE INT_METADATA_STORE\\s*\\(.*?\\);", Pattern.DOTALL).matcher(script);
      if (!m.find()) {
        throw new IllegalStateException(SI_SCHEMA + " has no CREATE TABLE INT_METADATA_STORE");
      }
      return m.group().replace("INT_", SI_PREFIX).replaceFirst(";$", "");
    }
  }

  private void prepare() throws Exception {
    System.out.printf("# pre-filling %d keys in each store, and %d payments...%n", prefill, prefill);
    execute("CREATE TABLE bench_peer_payment (id VARCHAR(40) PRIMARY KEY, account_id VARCHAR(40) NOT NULL,"
        + " amount BIGINT NOT NULL, created_at BIGINT NOT NULL)");
    execute("CREATE TABLE bench_peer_ledger (id BIGSERIAL PRIMARY KEY, payment_id VARCHAR(40) NOT NULL,"
        + " amount BIGINT NOT NULL, created_at BIGINT NOT NULL)");
    execute("INSERT INTO bench_peer_payment SELECT 'pay_' || g, 'acct_' || (g % 1000), g, 0"
        + " FROM generate_series(1, " + prefill + ") g");
    execute("INSERT INTO bench_peer_ledger (payment_id, amount, created_at) SELECT 'pay_' || g, g, 0"
        + " FROM generate_series(1, " + prefill + ") g");
    execute("INSERT INTO " + SI_PREFIX + "METADATA_STORE (METADATA_KEY, METADATA_VALUE, REGION)"
        + " SELECT 'prefill-' || g, '0', 'DEFAULT' FROM generate_series(1, " + prefill + ") g");
    execute("INSERT INTO " + CAMEL_TABLE + " (processorName, messageId, createdAt)"
        + " SELECT '" + SCOPE + "', 'prefill-' || g, now() FROM generate_series(1, " + prefill + ") g");
    fillRecords(store, "plain-");
    fillRecords(sealed, "sealed-");
    for (String table : List.of("bench_peer_payment", "bench_peer_ledger", RECORDS, CAMEL_TABLE,
        SI_PREFIX + "METADATA_STORE")) {
      execute("VACUUM ANALYZE " + table);
    }
  }

  /** Completed records with their answers, written through {@code target} (sealed there if it seals). */
  private void fillRecords(IdempotencyStore target, String prefix) throws Exception {
    Instant now = Instant.now();
    for (int from = 1; from <= prefill; from += 1000) {
      int first = from;
      target.inTransaction(tx -> {
        for (int i = first; i < first + 1000 && i <= prefill; i++) {
          RecordKey key = RecordKey.of(SCOPE, OPERATION, prefix + i);
          target.insert(tx, IdempotencyRecord.finished(key, FINGERPRINT, answer(key.key().value()),
              RecordState.COMPLETED, now, TTL));
        }
        return null;
      });
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  // ------------------------------------------------------------------ new keys

  /** The answer kept for a key: a small JSON body, as a payment API would return it. */
  private static StoredResponse answer(String key) {
    return StoredResponse.json(201, "{\"id\":\"pay_" + key + "\",\"status\":\"captured\",\"amount\":"
        + (100 + Math.floorMod(key.hashCode(), 5000)) + ",\"currency\":\"EUR\"}");
  }

  /** Two inserts and a COMMIT; should one fail, the pool rolls the transaction back when the connection closes. */
  private void bare() throws SQLException {
    String id = "pay_" + UuidV7.next();
    long amount = ThreadLocalRandom.current().nextLong(100, 5100);
    try (Connection c = ds.getConnection(); PreparedStatement payment = c.prepareStatement(
        "INSERT INTO bench_peer_payment (id, account_id, amount, created_at) VALUES (?, 'acct_1', ?, ?)");
        PreparedStatement ledger = c.prepareStatement(
            "INSERT INTO bench_peer_ledger (payment_id, amount, created_at) VALUES (?, ?, ?)")) {
      c.setAutoCommit(false);
      for (PreparedStatement ps : List.of(payment, ledger)) {
        ps.setString(1, id);
        ps.setLong(2, amount);
        ps.setLong(3, System.currentTimeMillis());
        ps.executeUpdate();
      }
      c.commit();
    }
  }

  /** Idem's record columns written by hand: an in-progress insert, then the update to completed with the answer. */
  private void rawClaimComplete() throws SQLException {
    String key = UuidV7.next().toString();
    try (Connection c = ds.getConnection()) {
      rawInsert(c, key, null);
      StoredResponse answer = answer(key);
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + RECORDS + " SET state = 'completed',"
          + " response_status = ?, response_headers = ?, response_body = ?, lease_owner = NULL,"
          + " locked_until = NULL, version = 2, updated_at = ? WHERE scope = ? AND operation = ? AND idem_key = ?"
          + " AND version = 1")) {
        ps.setInt(1, answer.status());
        ps.setString(2, HEADERS);
        ps.setBytes(3, answer.body());
        ps.setLong(4, System.currentTimeMillis());
        ps.setString(5, RAW_SCOPE);
        ps.setString(6, OPERATION);
        ps.setString(7, key);
        if (ps.executeUpdate() != 1) {
          throw new IllegalStateException("the raw completion of " + key + " found no claim");
        }
      }
    }
  }

  /** Atomic mode's record write by hand: one auto-commit insert of a record completed with its answer. */
  private void rawOneStep() throws SQLException {
    String key = UuidV7.next().toString();
    try (Connection c = ds.getConnection()) {
      rawInsert(c, key, answer(key));
    }
  }

  /** One auto-commit insert of a record: in progress under a lease without {@code answer}, else completed. */
  private static void rawInsert(Connection c, String key, StoredResponse answer) throws SQLException {
    long now = System.currentTimeMillis();
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + RECORDS + " (scope, operation, idem_key, state,"
        + " fingerprint, response_status, response_headers, response_body, lease_owner, locked_until, version,"
        + " created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)")) {
      ps.setString(1, RAW_SCOPE);
      ps.setString(2, OPERATION);
      ps.setString(3, key);
      ps.setString(4, answer == null ? "in_progress" : "completed");
      ps.setString(5, FINGERPRINT.hash());
      ps.setObject(6, answer == null ? null : answer.status(), Types.INTEGER);
      ps.setString(7, answer == null ? null : HEADERS);
      ps.setBytes(8, answer == null ? null : answer.body());
      ps.setString(9, answer == null ? "bench" : null);
      ps.setObject(10, answer == null ? now + LEASE.toMillis() : null, Types.BIGINT);
      ps.setLong(11, now);
      ps.setLong(12, now);
      ps.setLong(13, now + TTL.toMillis());
      ps.executeUpdate();
    }
  }

  /**
   * Atomic mode's record write through the store SPI, with no business write around it: a record completed with its
   * answer from its first write, inserted as the last write of its transaction (with the COMMIT, on PostgreSQL).
   */
  private static void oneStep(IdempotencyStore target) throws Exception {
    RecordKey key = RecordKey.of(SCOPE, OPERATION, UuidV7.next().toString());
    IdempotencyRecord done = IdempotencyRecord.finished(key, FINGERPRINT, answer(key.key().value()),
        RecordState.COMPLETED, Instant.now(), TTL);
    if (!target.inTransaction(tx -> target.insertLast(tx, done))) {
      throw new IllegalStateException("a new key was already there: " + key);
    }
  }

  /**
   * Idem's claim and completion through the store SPI: the in-progress record as the one and last write of its
   * transaction (on PostgreSQL the insert and the COMMIT share a round trip), then the version-checked update to
   * completed with the answer as the last write of a second transaction (sent with its COMMIT too), as the engine's
   * leased mode does.
   */
  private static void claimComplete(IdempotencyStore target) throws Exception {
    RecordKey key = RecordKey.of(SCOPE, OPERATION, UuidV7.next().toString());
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key, FINGERPRINT, "bench", Instant.now(), LEASE, TTL);
    if (!target.inTransaction(tx -> target.insertLast(tx, claimed))) {
      throw new IllegalStateException("a new key was already claimed: " + key);
    }
    IdempotencyRecord done = claimed.finish(RecordState.COMPLETED, answer(key.key().value()), Instant.now());
    if (!target.inTransaction(tx -> target.updateLast(tx, done))) {
      throw new IllegalStateException("the completion of " + key + " lost its claim");
    }
  }

  private void siPutIfAbsent() {
    String key = UuidV7.next().toString();
    String value = Long.toString(System.currentTimeMillis());
    String previous = transaction.execute(status -> metadata.putIfAbsent(key, value));
    if (previous != null) {
      throw new IllegalStateException("a new key was already there: " + key);
    }
  }

  /**
   * Camel's idempotent consumer on a new key: with {@code eager=true} (its default) {@code add} before the work and
   * {@code confirm} after it; with {@code eager=false}, {@code contains} before the work and {@code add} then
   * {@code confirm} after it.
   */
  private void camelNewKey(boolean notEager) {
    String key = UuidV7.next().toString();
    if (notEager && camel.contains(key)) {
      throw new IllegalStateException("a new key was already there: " + key);
    }
    if (!camel.add(key)) {
      throw new IllegalStateException("a new key was already there: " + key);
    }
    camel.confirm(key);
  }

  // ------------------------------------------------------------------ keys already there

  private String existingKey(String prefix) {
    return prefix + (1 + ThreadLocalRandom.current().nextInt(prefill));
  }

  private void rawRead() throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT state, fingerprint,"
        + " response_status, response_headers, response_body FROM " + RECORDS
        + " WHERE scope = ? AND operation = ? AND idem_key = ?")) {
      ps.setString(1, SCOPE);
      ps.setString(2, OPERATION);
      ps.setString(3, existingKey("plain-"));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getBytes(5) == null) {
          throw new IllegalStateException("a pre-filled record is missing or has no answer");
        }
      }
    }
  }

  private void replay(IdempotencyStore source, String prefix) {
    Optional<IdempotencyRecord> found = source.find(RecordKey.of(SCOPE, OPERATION, existingKey(prefix)));
    if (found.isEmpty() || found.get().state() != RecordState.COMPLETED || found.get().response() == null
        || found.get().response().bodyLength() == 0) {
      throw new IllegalStateException("a pre-filled record is missing or has no answer: " + found);
    }
  }

  private void siGet() {
    if (metadata.get(existingKey("prefill-")) == null) {
      throw new IllegalStateException("a pre-filled key is missing from the metadata store");
    }
  }

  private void camelContains() {
    if (!camel.contains(existingKey("prefill-"))) {
      throw new IllegalStateException("a pre-filled key is missing from Camel's repository");
    }
  }

  // ------------------------------------------------------------------ report

  private static String code(String variant) {
    return variant.substring(0, variant.indexOf(' '));
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "?";
    }
  }

  private static void report(Map<String, List<LoadPass.Result>> results) {
    System.out.println();
    System.out.println("| variant | ops/s per pass | mean ops/s | client CPU us/op | db CPU us/op (all postgres"
        + " processes) | db CPU us/op (the pool's backends) | commits/op (median) | WAL bytes/op (median) |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
    Map<String, String> names = new LinkedHashMap<>();
    results.forEach((name, list) -> {
      names.put(code(name), name);
      StringBuilder per = new StringBuilder();
      for (LoadPass.Result r : list) {
        per.append(per.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", r.opsPerSecond()));
      }
      System.out.printf(Locale.ROOT, "| %s | %s | %.0f | %.1f | %.1f | %.1f | %.2f | %.0f |%n", name, per,
          mean(list, LoadPass.Result::opsPerSecond), mean(list, LoadPass.Result::clientCpuUs),
          mean(list, LoadPass.Result::dbCpuUs), mean(list, LoadPass.Result::backendCpuUs),
          median(list, LoadPass.Result::commitsPerOp),
          median(list, LoadPass.Result::walBytesPerOp));
    });
    System.out.println();
    System.out.println("| ratio of ops/s | per pass | median (min-max) |");
    System.out.println("| --- | --- | --- |");
    for (String[] pair : RATIOS) {
      if (names.containsKey(pair[0]) && names.containsKey(pair[1])) {
        ratio(results.get(names.get(pair[0])), results.get(names.get(pair[1])));
      }
    }
  }

  private static double mean(List<LoadPass.Result> list, ToDoubleFunction<LoadPass.Result> f) {
    return list.stream().mapToDouble(f).average().orElse(Double.NaN);
  }

  /** The median over the passes: WAL and commits are the server's, and another session's burst skews one pass. */
  private static double median(List<LoadPass.Result> list, ToDoubleFunction<LoadPass.Result> f) {
    return LoadPass.median(list.stream().mapToDouble(f).toArray());
  }

  /** The throughput ratio per pass (adjacent runs of the same pass), and its median, minimum and maximum. */
  private static void ratio(List<LoadPass.Result> num, List<LoadPass.Result> den) {
    double[] ratios = new double[num.size()];
    StringBuilder per = new StringBuilder();
    for (int i = 0; i < ratios.length; i++) {
      ratios[i] = num.get(i).opsPerSecond() / den.get(i).opsPerSecond();
      per.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", ratios[i]));
    }
    double min = Arrays.stream(ratios).min().orElse(Double.NaN);
    double max = Arrays.stream(ratios).max().orElse(Double.NaN);
    System.out.printf(Locale.ROOT, "| (%s) / (%s) | %s | %.2f (%.2f-%.2f) |%n", num.get(0).name().replaceFirst(
        ", pass 1$", ""), den.get(0).name().replaceFirst(", pass 1$", ""), per, LoadPass.median(ratios), min, max);
  }
}
