package dev.idem.outbox;

import dev.idem.core.fingerprint.JsonCanonicalizer;
import dev.idem.core.fingerprint.MalformedJsonException;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.SqlErrors;
import dev.idem.outbox.internal.HeaderCodec;
import dev.idem.outbox.internal.OutboxSchema;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The transactional outbox on a JDBC database (PostgreSQL, MariaDB, H2): {@link #enqueue} writes events in the
 * caller's transaction, so an event exists if and only if the business write it describes committed. An
 * {@link OutboxRelay} sends them; the operator methods list, replay and discard them.
 *
 * <pre>{@code
 * Outbox outbox = Outbox.builder(dataSource).orderedTypes(Set.of("account.updated")).build();
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   insertPayment(c, payment);
 *   outbox.enqueue(c, OutboxEvent.builder("payment.succeeded").aggregate("payment", payment.id())
 *       .payload(json).destination("webhook:" + endpointId).build());
 *   c.commit();
 * }
 * }</pre>
 *
 * <p>Thread-safe. Every value is a bind parameter; only the validated table names are part of the SQL text.
 */
public final class Outbox {
  static final String COLUMNS = "seq, id, event_type, aggregate_type, aggregate_id, ordered, payload, headers,"
      + " destination, status, attempts, attempt_base, available_at, lease_owner, lease_until, last_error,"
      + " created_at, delivered_at";
  private static final String MESSAGE_COLUMNS = "seq, id, event_type, aggregate_type, aggregate_id, payload, headers,"
      + " destination, attempts, attempt_base, created_at";

  private final DataSource dataSource;
  private final JdbcDialect dialect;
  private final String table;
  private final String attemptTable;
  private final Set<String> orderedTypes;
  private final Clock clock;
  private final int maxPayloadBytes;
  private final int historyLimit;
  private final boolean validateJson;
  private final String insert;
  private final String claimPostgres;
  private final String claimSelect;
  private final java.util.concurrent.ConcurrentMap<List<String>, String[]> claimsByRoutes =
      new java.util.concurrent.ConcurrentHashMap<>();

  private Outbox(Builder b) {
    this.dataSource = b.dataSource;
    this.dialect = b.dialect;
    this.table = b.table;
    this.attemptTable = b.table + "_attempt";
    this.orderedTypes = Set.copyOf(b.orderedTypes);
    this.clock = b.clock;
    this.maxPayloadBytes = b.maxPayloadBytes;
    this.historyLimit = b.historyLimit;
    this.validateJson = b.validateJson;
    this.insert = "INSERT INTO " + table + " (id, event_type, aggregate_type, aggregate_id, ordered, payload, headers,"
        + " destination, status, attempts, attempt_base, available_at, created_at)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, 0, ?, ?)";
    String[] claims = claimStatements(List.of());
    this.claimPostgres = claims[0];
    this.claimSelect = claims[1];
  }

  /**
   * The claim statements for a relay with these routes (none: every destination): the PostgreSQL single statement
   * and the locking select of the others. Ordered events wait for older undelivered events of their aggregate bound
   * for the same destination.
   */
  private String[] claimStatements(List<String> routes) {
    StringBuilder routeFilter = new StringBuilder();
    for (int i = 0; i < routes.size(); i++) {
      routeFilter.append(i == 0 ? " AND (" : " OR ").append("o.destination = ? OR o.destination LIKE ? ESCAPE '!'");
    }
    if (!routes.isEmpty()) {
      routeFilter.append(')');
    }
    String eligible = "FROM " + table + " o WHERE o.status = 'pending' AND o.available_at <= ?" + routeFilter
        + " AND (o.ordered = FALSE OR NOT EXISTS (SELECT 1 FROM " + table + " p WHERE p.ordered = TRUE"
        + " AND p.aggregate_type = o.aggregate_type AND p.aggregate_id = o.aggregate_id"
        + " AND p.status IN ('pending', 'dead') AND p.seq < o.seq AND p.destination = o.destination))"
        + " ORDER BY o.available_at, o.seq LIMIT ? FOR UPDATE SKIP LOCKED";
    return new String[] {
      "UPDATE " + table + " SET lease_owner = ?, lease_until = ?, available_at = ?"
          + " WHERE seq = ANY (ARRAY(SELECT o.seq " + eligible + ")) RETURNING " + MESSAGE_COLUMNS,
      "SELECT o.seq, o.id, o.event_type, o.aggregate_type, o.aggregate_id, o.payload, o.headers,"
          + " o.destination, o.attempts, o.attempt_base, o.created_at " + eligible
    };
  }

  private static int bindRoutes(PreparedStatement ps, int at, List<String> routes) throws SQLException {
    for (String route : routes) {
      ps.setString(at++, route);
      ps.setString(at++, route.replace("!", "!!").replace("%", "!%").replace("_", "!_") + ":%");
    }
    return at;
  }

  /** A builder for an outbox on {@code dataSource}. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  public JdbcDialect dialect() {
    return dialect;
  }

  /** The outbox table; the attempt history is {@code <table>_attempt}. */
  public String table() {
    return table;
  }

  Clock clock() {
    return clock;
  }

  DataSource dataSource() {
    return dataSource;
  }

  /** Whether events of {@code type} are delivered in order per aggregate. */
  public boolean isOrdered(String type) {
    return orderedTypes.contains(type);
  }

  // ---------------------------------------------------------------------------------------------------- enqueue

  /**
   * Writes {@code event} on {@code connection}, in whatever transaction the caller has open there; it is sent only
   * if that transaction commits. Does not commit, roll back or close the connection.
   *
   * @return the event id
   * @throws IllegalArgumentException when the payload is too large or not JSON
   * @throws IllegalStateException when the connection is in auto-commit mode
   * @throws dev.idem.core.StoreException when the database refuses the write (a duplicate event id among them)
   */
  public UUID enqueue(Connection connection, OutboxEvent event) {
    enqueueAll(connection, List.of(event));
    return event.id();
  }

  /** Writes several events on {@code connection} in one batch; see {@link #enqueue}. */
  public List<UUID> enqueueAll(Connection connection, List<OutboxEvent> events) {
    Objects.requireNonNull(connection, "connection");
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalStateException("enqueue writes in the caller's transaction: switch auto-commit off and"
            + " commit with the business write, or the event would commit on its own");
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "checking the transaction", e);
    }
    List<UUID> ids = new ArrayList<>(events.size());
    for (OutboxEvent e : events) {
      checkPayload(e);
      ids.add(e.id());
    }
    if (events.isEmpty()) {
      return ids;
    }
    long now = clock.millis();
    try (PreparedStatement ps = connection.prepareStatement(insert)) {
      for (OutboxEvent e : events) {
        ps.setString(1, e.id().toString());
        ps.setString(2, e.type());
        ps.setString(3, e.aggregateType());
        ps.setString(4, e.aggregateId());
        ps.setBoolean(5, orderedTypes.contains(e.type()));
        ps.setString(6, e.payload());
        ps.setString(7, HeaderCodec.encode(e.headers()));
        ps.setString(8, e.destination());
        ps.setLong(9, e.availableAt().map(Instant::toEpochMilli).filter(t -> t > now).orElse(now));
        ps.setLong(10, now);
        if (events.size() == 1) {
          ps.executeUpdate();
        } else {
          ps.addBatch();
        }
      }
      if (events.size() > 1) {
        ps.executeBatch();
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "enqueueing " + events.size() + " event(s)", e);
    }
    return ids;
  }

  private void checkPayload(OutboxEvent e) {
    int bytes = utf8Length(e.payload(), maxPayloadBytes);
    if (bytes > maxPayloadBytes) {
      throw new IllegalArgumentException("event " + e.id() + " payload is larger than " + maxPayloadBytes + " bytes");
    }
    if (validateJson) {
      try {
        JsonCanonicalizer.canonicalize(e.payload());
      } catch (MalformedJsonException ex) {
        throw new IllegalArgumentException("event " + e.id() + " payload is not JSON: " + ex.getMessage(), ex);
      }
    }
  }

  private static int utf8Length(String s, int stopAbove) {
    if (s.length() > stopAbove) {
      return s.length();
    }
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  // ------------------------------------------------------------------------------------------- relay internals

  /** A claimed row: its message and what the relay needs to decide its fate. */
  record Claimed(long seq, OutboxMessage message, int attempts, int attemptBase) {}

  /** A failed send, to be recorded. */
  record Failure(Claimed claimed, DeliveryResult result, boolean dead, Instant nextAttempt) {}

  /**
   * Claims up to {@code limit} due rows for {@code token} until {@code now + lease}: one statement on PostgreSQL, a
   * locking select and an update in one transaction elsewhere. Rows other relays hold are skipped, not waited for.
   */
  List<Claimed> claim(String token, Duration lease, int limit) {
    return claim(token, lease, limit, List.of());
  }

  /** As {@link #claim(String, Duration, int)}, only rows whose destination's route is one of {@code routes}. */
  List<Claimed> claim(String token, Duration lease, int limit, List<String> routes) {
    String[] sql = routes.isEmpty() ? new String[] {claimPostgres, claimSelect}
        : claimsByRoutes.computeIfAbsent(List.copyOf(routes), this::claimStatements);
    long now = clock.millis();
    long until = now + lease.toMillis();
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      // only MariaDB's claim changes the isolation; asking costs a round trip on some drivers
      int isolation = dialect == JdbcDialect.MARIADB ? c.getTransactionIsolation() : -1;
      try {
        if (dialect == JdbcDialect.POSTGRESQL) {
          if (!autoCommit) {
            c.setAutoCommit(true);
          }
          try (PreparedStatement ps = c.prepareStatement(sql[0])) {
            ps.setString(1, token);
            ps.setLong(2, until);
            ps.setLong(3, until);
            ps.setLong(4, now);
            ps.setInt(bindRoutes(ps, 5, routes), limit);
            List<Claimed> out = new ArrayList<>(limit);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(readClaimed(rs));
              }
            }
            out.sort((a, b) -> Long.compare(a.seq(), b.seq()));
            return out;
          }
        }
        // READ COMMITTED: no gap locks on MariaDB, so relays skip each other's rows instead of blocking
        c.setAutoCommit(false);
        if (dialect == JdbcDialect.MARIADB) {
          c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        try {
          List<Claimed> out = new ArrayList<>(limit);
          try (PreparedStatement ps = c.prepareStatement(sql[1])) {
            ps.setLong(1, now);
            ps.setInt(bindRoutes(ps, 2, routes), limit);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(readClaimed(rs));
              }
            }
          }
          if (!out.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET lease_owner = ?, lease_until = ?, available_at = ? WHERE seq IN (" + marks(out.size()) + ")")) {
              ps.setString(1, token);
              ps.setLong(2, until);
              ps.setLong(3, until);
              int i = 4;
              for (Claimed cl : out) {
                ps.setLong(i++, cl.seq());
              }
              ps.executeUpdate();
            }
          }
          c.commit();
          out.sort((a, b) -> Long.compare(a.seq(), b.seq()));
          return out;
        } catch (SQLException | RuntimeException | Error e) {
          rollbackQuietly(c, e);
          throw e;
        }
      } finally {
        restore(c, autoCommit, isolation);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "claiming due events", e);
    }
  }

  private Claimed readClaimed(ResultSet rs) throws SQLException {
    long seq = rs.getLong(1);
    int attempts = rs.getInt(9);
    int base = rs.getInt(10);
    OutboxMessage m = new OutboxMessage(UUID.fromString(rs.getString(2).trim()), rs.getString(3), rs.getString(4),
        rs.getString(5), rs.getString(6), HeaderCodec.decode(rs.getString(7)), rs.getString(8), attempts + 1,
        Instant.ofEpochMilli(rs.getLong(11)));
    return new Claimed(seq, m, attempts, base);
  }

  /**
   * Records the outcome of a batch in one transaction: delivered rows are marked (or deleted), failed rows get their
   * next attempt time or die, and each failure goes to the history. Only rows still leased to {@code token} change.
   *
   * @return how many rows changed; fewer than sent when a lease ran out and another relay took a row
   */
  int finish(String token, List<Claimed> delivered, List<Failure> failures, boolean deleteDelivered) {
    if (delivered.isEmpty() && failures.isEmpty()) {
      return 0;
    }
    long now = clock.millis();
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      int changed = 0;
      try {
        c.setAutoCommit(false);
        for (int from = 0; from < delivered.size(); from += 500) {
          List<Claimed> chunk = delivered.subList(from, Math.min(delivered.size(), from + 500));
          String sql = deleteDelivered
              ? "DELETE FROM " + table + " WHERE lease_owner = ? AND seq IN (" + marks(chunk.size()) + ")"
              : "UPDATE " + table + " SET status = 'delivered', delivered_at = ?, attempts = attempts + 1,"
                  + " lease_owner = NULL, lease_until = NULL, last_error = NULL WHERE lease_owner = ? AND seq IN ("
                  + marks(chunk.size()) + ")";
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            if (!deleteDelivered) {
              ps.setLong(i++, now);
            }
            ps.setString(i++, token);
            for (Claimed cl : chunk) {
              ps.setLong(i++, cl.seq());
            }
            changed += ps.executeUpdate();
          }
        }
        if (!failures.isEmpty()) {
          changed += recordFailures(c, token, failures, now);
        }
        c.commit();
        return changed;
      } catch (SQLException | RuntimeException | Error e) {
        rollbackQuietly(c, e);
        throw e;
      } finally {
        restore(c, autoCommit, -1);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "recording deliveries", e);
    }
  }

  private int recordFailures(Connection c, String token, List<Failure> failures, long now) throws SQLException {
    // one statement per failure, not a batch: a batch may report SUCCESS_NO_INFO, and only a row still leased to
    // this relay may get a history row (failures are the exception, so this costs little)
    List<Failure> recorded = new ArrayList<>(failures.size());
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET attempts = ?, status = ?,"
        + " available_at = ?, lease_owner = NULL, lease_until = NULL, last_error = ? WHERE seq = ? AND lease_owner = ?")) {
      for (Failure f : failures) {
        ps.setInt(1, f.claimed().attempts() + 1);
        ps.setString(2, f.dead() ? "dead" : "pending");
        ps.setLong(3, f.nextAttempt().toEpochMilli());
        ps.setString(4, Limits.error(f.result().error().orElse("failed")));
        ps.setLong(5, f.claimed().seq());
        ps.setString(6, token);
        if (ps.executeUpdate() == 1) {
          recorded.add(f);
        }
      }
    }
    if (recorded.isEmpty()) {
      return 0;
    }
    try (PreparedStatement ins = c.prepareStatement("INSERT INTO " + attemptTable
        + " (event_seq, attempt, attempted_at, error, response_code) VALUES (?, ?, ?, ?, ?)");
        PreparedStatement trim = c.prepareStatement("DELETE FROM " + attemptTable
            + " WHERE event_seq = ? AND attempt <= ?")) {
      boolean trimming = false;
      for (Failure f : recorded) {
        int attempt = f.claimed().attempts() + 1;
        ins.setLong(1, f.claimed().seq());
        ins.setInt(2, attempt);
        ins.setLong(3, now);
        ins.setString(4, Limits.error(f.result().error().orElse("failed")));
        Integer code = f.result().responseCode().orElse(null);
        if (code == null) {
          ins.setNull(5, Types.INTEGER);
        } else {
          ins.setInt(5, code);
        }
        ins.addBatch();
        if (attempt > historyLimit) {
          trim.setLong(1, f.claimed().seq());
          trim.setInt(2, attempt - historyLimit);
          trim.addBatch();
          trimming = true;
        }
      }
      ins.executeBatch();
      if (trimming) {
        trim.executeBatch();
      }
    }
    return recorded.size();
  }

  /** Gives rows back without counting an attempt (a relay stopping with unsent rows); only those leased to {@code token}. */
  int release(String token, Collection<Claimed> rows) {
    if (rows.isEmpty()) {
      return 0;
    }
    String sql = "UPDATE " + table + " SET available_at = ?, lease_owner = NULL, lease_until = NULL"
        + " WHERE lease_owner = ? AND seq IN (" + marks(rows.size()) + ")";
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      try {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setLong(1, clock.millis());
          ps.setString(2, token);
          int i = 3;
          for (Claimed cl : rows) {
            ps.setLong(i++, cl.seq());
          }
          return ps.executeUpdate();
        }
      } finally {
        restore(c, autoCommit, -1);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "releasing leased events", e);
    }
  }

  // ------------------------------------------------------------------------------------------------- operators

  /** One page of events matching {@code query}, by {@code seq}, each with its attempt history. */
  public OutboxPage list(OutboxQuery query) {
    Objects.requireNonNull(query, "query");
    List<Object> args = new ArrayList<>();
    String where = where(query, args);
    String sql = "SELECT " + COLUMNS + " FROM " + table + " WHERE seq > ?" + where + " ORDER BY seq LIMIT ?";
    try (Connection c = dataSource.getConnection()) {
      List<OutboxEntry> rows = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        int i = 1;
        ps.setLong(i++, query.afterSeq());
        for (Object a : args) {
          ps.setObject(i++, a);
        }
        ps.setInt(i, query.limit() + 1);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            rows.add(readEntry(rs, List.of()));
          }
        }
      }
      boolean more = rows.size() > query.limit();
      if (more) {
        rows.remove(rows.size() - 1);
      }
      List<OutboxEntry> withHistory = withHistory(c, rows);
      return new OutboxPage(List.copyOf(withHistory),
          more ? OptionalLong.of(rows.get(rows.size() - 1).seq()) : OptionalLong.empty());
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "listing events", e);
    }
  }

  /** The event with this id, with its attempt history. */
  public Optional<OutboxEntry> find(UUID id) {
    Objects.requireNonNull(id, "id");
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM " + table + " WHERE id = ?")) {
      ps.setString(1, id.toString());
      OutboxEntry e = null;
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          e = readEntry(rs, List.of());
        }
      }
      return e == null ? Optional.empty() : Optional.of(withHistory(c, List.of(e)).get(0));
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "finding event " + id, e);
    }
  }

  /**
   * Sends a dead, delivered or discarded event again: it is pending now with a fresh set of attempts; its history
   * stays. A dead head of an ordered aggregate unparks it.
   *
   * @return false when no such event exists or it is already pending
   */
  public boolean replay(UUID id) {
    Objects.requireNonNull(id, "id");
    return update("replaying event " + id, "UPDATE " + table + " SET status = 'pending', attempt_base = attempts,"
        + " available_at = ?, lease_owner = NULL, lease_until = NULL, delivered_at = NULL"
        + " WHERE id = ? AND status <> 'pending'", clock.millis(), id.toString()) == 1;
  }

  /**
   * Replays every event matching {@code filter}, which must name a status other than pending (usually
   * {@link OutboxStatus#DEAD}), in batches of {@code filter.limit()} rows per transaction.
   *
   * @return how many events were replayed
   */
  public int replayAll(OutboxQuery filter) {
    OutboxStatus status = filter.status().orElseThrow(() -> new IllegalArgumentException(
        "a bulk replay needs a status, usually DEAD"));
    if (status == OutboxStatus.PENDING) {
      throw new IllegalArgumentException("pending events are already going to be sent");
    }
    List<Object> args = new ArrayList<>();
    String select = "SELECT seq FROM " + table + " WHERE seq > ?" + where(filter, args) + " ORDER BY seq LIMIT ?";
    int total = 0;
    long after = filter.afterSeq();
    while (true) {
      List<Long> seqs = new ArrayList<>();
      try (Connection c = dataSource.getConnection()) {
        boolean autoCommit = c.getAutoCommit();
        try {
          c.setAutoCommit(true);
          try (PreparedStatement ps = c.prepareStatement(select)) {
            int i = 1;
            ps.setLong(i++, after);
            for (Object a : args) {
              ps.setObject(i++, a);
            }
            ps.setInt(i, filter.limit());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                seqs.add(rs.getLong(1));
              }
            }
          }
          if (seqs.isEmpty()) {
            return total;
          }
          try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET status = 'pending',"
              + " attempt_base = attempts, available_at = ?, lease_owner = NULL, lease_until = NULL,"
              + " delivered_at = NULL WHERE status = ? AND seq IN (" + marks(seqs.size()) + ")")) {
            ps.setLong(1, clock.millis());
            ps.setString(2, status.column());
            int i = 3;
            for (long s : seqs) {
              ps.setLong(i++, s);
            }
            total += ps.executeUpdate();
          }
        } finally {
          restore(c, autoCommit, -1);
        }
      } catch (SQLException e) {
        throw SqlErrors.wrap(table, dialect, "replaying events", e);
      }
      after = seqs.get(seqs.size() - 1);
    }
  }

  /**
   * Gives up on a dead event, or a pending one that no relay holds: it is not sent again, and a parked ordered
   * aggregate moves on to its next event. Purged with delivered events. An event a relay is sending right now cannot
   * be discarded (it may be arriving): try again when its lease has ended.
   *
   * @return false when no such event exists, it is delivered or discarded already, or a relay holds it
   */
  public boolean discard(UUID id) {
    Objects.requireNonNull(id, "id");
    long now = clock.millis();
    return update("discarding event " + id, "UPDATE " + table + " SET status = 'discarded', delivered_at = ?,"
        + " lease_owner = NULL, lease_until = NULL WHERE id = ? AND (status = 'dead' OR status = 'pending'"
        + " AND (lease_owner IS NULL OR lease_until <= ?))", now, id.toString(), now) == 1;
  }

  /**
   * Deletes up to {@code batchSize} delivered or discarded events finished more than {@code retention} ago, with
   * their history.
   *
   * @return how many were deleted; call again while it returns {@code batchSize}
   */
  public int purge(Duration retention, int batchSize) {
    if (retention.isNegative() || batchSize < 1) {
      throw new IllegalArgumentException("retention must not be negative and batchSize must be positive");
    }
    long before = clock.millis() - retention.toMillis();
    String sql;
    switch (dialect) {
      case POSTGRESQL:
        sql = "DELETE FROM " + table + " WHERE seq IN (SELECT seq FROM " + table + " WHERE status IN ('delivered',"
            + " 'discarded') AND delivered_at <= ? ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED)";
        break;
      case MARIADB:
        sql = "DELETE FROM " + table + " WHERE status IN ('delivered', 'discarded') AND delivered_at <= ?"
            + " ORDER BY status, seq LIMIT ?";
        break;
      default:
        sql = "DELETE FROM " + table + " WHERE status IN ('delivered', 'discarded') AND delivered_at <= ?"
            + " FETCH FIRST ? ROWS ONLY";
    }
    return update("purging finished events", sql, before, batchSize);
  }

  /** Purges in batches until nothing older than {@code retention} is left; see {@link #purge}. */
  public long purgeAll(Duration retention, int batchSize) {
    long total = 0;
    int n;
    do {
      n = purge(retention, batchSize);
      total += n;
    } while (n == batchSize);
    return total;
  }

  /** Rows per status and the age of the oldest pending event. */
  public OutboxStats stats() {
    return stats(java.util.EnumSet.allOf(OutboxStatus.class));
  }

  /**
   * Rows in the given statuses only, and the age of the oldest pending event when {@code PENDING} is one of them:
   * for meters that watch the backlog, without counting the delivered rows kept for the retention period.
   */
  public OutboxStats stats(Set<OutboxStatus> statuses) {
    Map<OutboxStatus, Long> counts = new EnumMap<>(OutboxStatus.class);
    Optional<Duration> oldest = Optional.empty();
    try (Connection c = dataSource.getConnection()) {
      for (OutboxStatus s : statuses) {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + table + " WHERE status = ?")) {
          ps.setString(1, s.column());
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            counts.put(s, rs.getLong(1));
          }
        }
      }
      if (statuses.contains(OutboxStatus.PENDING)) {
        try (PreparedStatement ps = c.prepareStatement("SELECT MIN(created_at) FROM " + table
            + " WHERE status = 'pending'");
            ResultSet rs = ps.executeQuery()) {
          rs.next();
          long min = rs.getLong(1);
          if (!rs.wasNull()) {
            oldest = Optional.of(Duration.ofMillis(Math.max(0, clock.millis() - min)));
          }
        }
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "reading outbox statistics", e);
    }
    return new OutboxStats(Map.copyOf(counts), oldest);
  }

  /** Creates the outbox and attempt history tables where missing. */
  public void createSchemaIfMissing() {
    try (Connection c = dataSource.getConnection()) {
      OutboxSchema.create(c, dialect, table, null);
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "creating the outbox schema", e);
    }
  }

  // ---------------------------------------------------------------------------------------------------- helpers

  private static String where(OutboxQuery q, List<Object> args) {
    StringBuilder w = new StringBuilder();
    q.status().ifPresent(s -> {
      w.append(" AND status = ?");
      args.add(s.column());
    });
    q.type().ifPresent(t -> {
      w.append(" AND event_type = ?");
      args.add(t);
    });
    q.destination().ifPresent(d -> {
      w.append(" AND destination = ?");
      args.add(d);
    });
    q.aggregateType().ifPresent(t -> {
      w.append(" AND aggregate_type = ?");
      args.add(t);
    });
    q.aggregateId().ifPresent(t -> {
      w.append(" AND aggregate_id = ?");
      args.add(t);
    });
    return w.toString();
  }

  private List<OutboxEntry> withHistory(Connection c, List<OutboxEntry> rows) throws SQLException {
    if (rows.isEmpty()) {
      return rows;
    }
    Map<Long, List<OutboxAttempt>> history = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT event_seq, attempt, attempted_at, error, response_code"
        + " FROM " + attemptTable + " WHERE event_seq IN (" + marks(rows.size()) + ") ORDER BY event_seq, attempt")) {
      int i = 1;
      for (OutboxEntry e : rows) {
        ps.setLong(i++, e.seq());
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int code = rs.getInt(5);
          Integer response = rs.wasNull() ? null : code;
          history.computeIfAbsent(rs.getLong(1), k -> new ArrayList<>()).add(new OutboxAttempt(rs.getInt(2),
              Instant.ofEpochMilli(rs.getLong(3)), rs.getString(4), response));
        }
      }
    }
    List<OutboxEntry> out = new ArrayList<>(rows.size());
    for (OutboxEntry e : rows) {
      List<OutboxAttempt> h = history.getOrDefault(e.seq(), List.of());
      out.add(new OutboxEntry(e.seq(), e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.ordered(), e.payload(),
          e.headers(), e.destination(), e.status(), e.attempts(), e.attemptsSinceReplay(), e.availableAt(),
          e.leaseOwner(), e.leaseUntil(), e.lastError(), e.createdAt(), e.finishedAt(), List.copyOf(h)));
    }
    return out;
  }

  private static OutboxEntry readEntry(ResultSet rs, List<OutboxAttempt> history) throws SQLException {
    long leaseUntil = rs.getLong(15);
    Instant lease = rs.wasNull() ? null : Instant.ofEpochMilli(leaseUntil);
    long delivered = rs.getLong(18);
    Instant finished = rs.wasNull() ? null : Instant.ofEpochMilli(delivered);
    int attempts = rs.getInt(11);
    return new OutboxEntry(rs.getLong(1), UUID.fromString(rs.getString(2).trim()), rs.getString(3), rs.getString(4),
        rs.getString(5), rs.getBoolean(6), rs.getString(7), HeaderCodec.decode(rs.getString(8)), rs.getString(9),
        OutboxStatus.fromColumn(rs.getString(10)), attempts, attempts - rs.getInt(12),
        Instant.ofEpochMilli(rs.getLong(13)), rs.getString(14), lease, rs.getString(16),
        Instant.ofEpochMilli(rs.getLong(17)), finished, history);
  }

  private int update(String what, String sql, Object... args) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      try {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
          }
          return ps.executeUpdate();
        }
      } finally {
        restore(c, autoCommit, -1);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, what, e);
    }
  }

  static String marks(int n) {
    StringBuilder b = new StringBuilder(n * 3);
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "?" : ", ?");
    }
    return b.toString();
  }

  private static void restore(Connection c, boolean autoCommit, int isolation) {
    try {
      if (isolation >= 0 && c.getTransactionIsolation() != isolation) {
        c.setTransactionIsolation(isolation);
      }
      if (c.getAutoCommit() != autoCommit) {
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException ignored) {
      // the pool validates the connection before it is lent again
    }
  }

  private static void rollbackQuietly(Connection c, Throwable cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  static JdbcDialect detect(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return JdbcDialect.fromProductName(c.getMetaData().getDatabaseProductName());
    } catch (SQLException e) {
      throw SqlErrors.wrap("outbox", null, "connecting to detect the database dialect", e);
    }
  }

  @Override
  public String toString() {
    return "Outbox{" + dialect + ' ' + table + ", ordered=" + orderedTypes + '}';
  }

  /** Builds an {@link Outbox}. */
  public static final class Builder {
    private final DataSource dataSource;
    private JdbcDialect dialect;
    private String table = OutboxSchema.DEFAULT_OUTBOX;
    private Set<String> orderedTypes = Set.of();
    private Clock clock = Clock.systemUTC();
    private int maxPayloadBytes = 1 << 20;
    private int historyLimit = 20;
    private boolean validateJson = true;
    private boolean createSchema;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** The database; detected from the connection when not set. */
    public Builder dialect(JdbcDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /** The outbox table (default {@code idem_outbox}); the history is {@code <table>_attempt}. */
    public Builder table(String table) {
      this.table = OutboxSchema.checkTable(table);
      return this;
    }

    /**
     * Event types delivered in order per aggregate: only the oldest undelivered event of an aggregate is sent, and
     * a dead one parks the aggregate until an operator replays or discards it. Decided when an event is enqueued.
     */
    public Builder orderedTypes(Set<String> types) {
      Set<String> copy = new java.util.LinkedHashSet<>();
      for (String t : types) {
        copy.add(Limits.text("ordered type", t, Limits.NAME));
      }
      this.orderedTypes = copy;
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The largest payload, in UTF-8 bytes (default 1 MiB); a larger one is refused at enqueue. */
    public Builder maxPayloadBytes(int bytes) {
      if (bytes < 1 || bytes > 16 << 20) {
        throw new IllegalArgumentException("maxPayloadBytes must be 1 to 16 MiB, got " + bytes);
      }
      this.maxPayloadBytes = bytes;
      return this;
    }

    /** Failed attempts kept per event, newest first (default 20). */
    public Builder historyLimit(int limit) {
      if (limit < 1 || limit > 1000) {
        throw new IllegalArgumentException("historyLimit must be 1 to 1000, got " + limit);
      }
      this.historyLimit = limit;
      return this;
    }

    /** Whether enqueue checks that the payload is JSON (default true). */
    public Builder validateJson(boolean validate) {
      this.validateJson = validate;
      return this;
    }

    /** Create the tables at build time where missing (default false: use your migration tool). */
    public Builder createSchemaIfMissing(boolean create) {
      this.createSchema = create;
      return this;
    }

    public Outbox build() {
      if (dialect == null) {
        dialect = detect(dataSource);
      }
      Outbox outbox = new Outbox(this);
      if (createSchema) {
        outbox.createSchemaIfMissing();
      }
      return outbox;
    }
  }
}
