package dev.idem.jdbc;

import dev.idem.core.crypto.Encryption;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.internal.HeaderCodec;
import dev.idem.jdbc.internal.SchemaScript;
import dev.idem.outbox.OutboxAttempt;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxSummary;
import dev.idem.outbox.OutboxSummaryPage;
import dev.idem.outbox.spi.ClaimedEvent;
import dev.idem.outbox.spi.FailedDelivery;
import dev.idem.outbox.spi.OutboxAdmin;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.outbox.spi.PendingEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import javax.sql.DataSource;

/**
 * The outbox on a JDBC database (PostgreSQL, MariaDB, H2): the table {@code idem_outbox} and its attempt history
 * {@code idem_outbox_attempt} (schema files {@code db/idem/<dialect>/V2__idem_outbox.sql}, then
 * {@code V7__idem_outbox_finished_index.sql}).
 *
 * <pre>{@code
 * JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource).build();
 * Outbox outbox = Outbox.builder(store).build();
 * }</pre>
 *
 * <p>A claim is one statement on PostgreSQL ({@code UPDATE ... WHERE seq = ANY (ARRAY(SELECT ... FOR UPDATE SKIP
 * LOCKED)) RETURNING ...}) and a locking select plus an update in one transaction elsewhere (MariaDB at READ
 * COMMITTED, so that relays skip each other's rows instead of waiting on gap locks). Every value is a bind parameter;
 * only the validated table names are part of the SQL text. Thread-safe.
 */
public final class JdbcOutboxStore extends JdbcStore implements OutboxStore {
  private static final String COLUMNS = "seq, id, event_type, aggregate_type, aggregate_id, ordered, payload,"
      + " headers, destination, status, attempts, attempt_base, available_at, lease_owner, lease_until, last_error,"
      + " created_at, delivered_at";
  /**
   * A listing's columns: the payload's size and the start that tells a sealed one, but not the payload (PostgreSQL
   * reads the size of a TOASTed value from its header, and the start from its first chunk) nor the headers.
   */
  private static final String SUMMARY_COLUMNS = "seq, id, event_type, aggregate_type, aggregate_id, ordered,"
      + " OCTET_LENGTH(payload), SUBSTRING(payload, 1, " + Encryption.TEXT_PREFIX.length() + "), destination,"
      + " status, attempts, attempt_base, available_at, lease_owner, lease_until, last_error, created_at,"
      + " delivered_at";
  private static final String MESSAGE_COLUMNS = "seq, id, event_type, aggregate_type, aggregate_id, payload,"
      + " headers, destination, attempts, attempt_base, created_at";

  private final String attemptTable;
  private final int historyLimit;
  private final String insert;
  private final String[] claimAll;
  private final ConcurrentMap<List<String>, String[]> claimsByRoutes = new ConcurrentHashMap<>();
  private final Admin admin = new Admin();

  private JdbcOutboxStore(Builder b) {
    super(b.dataSource, b.dialect, b.table, b.table, SchemaScript.OUTBOX);
    this.attemptTable = b.table + "_attempt";
    this.historyLimit = b.historyLimit;
    this.insert = "INSERT INTO " + table + " (id, event_type, aggregate_type, aggregate_id, ordered, payload,"
        + " headers, destination, status, attempts, attempt_base, available_at, created_at)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, 0, ?, ?)";
    this.claimAll = claimStatements(List.of());
  }

  /** A builder of a store on {@code dataSource}; the dialect is detected from it unless set. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /**
   * The statement this store claims with for a relay of every route, as sent (bind parameters as {@code ?}): on
   * PostgreSQL the single {@code UPDATE ... RETURNING}, elsewhere the locking select. For {@code EXPLAIN}.
   */
  public String claimStatement() {
    return claimAll[dialect == JdbcDialect.POSTGRESQL ? 0 : 1];
  }

  @Override
  public OutboxAdmin admin() {
    return admin;
  }

  // ---------------------------------------------------------------------------------------------------- enqueue

  @Override
  public void enqueue(StoreTransaction tx, List<PendingEvent> events, Instant now) {
    Connection connection = JdbcTransaction.callerConnection(tx, table, dialect);
    if (events.isEmpty()) {
      return;
    }
    long at = now.toEpochMilli();
    try (PreparedStatement ps = connection.prepareStatement(insert)) {
      for (PendingEvent p : events) {
        OutboxEvent e = p.event();
        ps.setString(1, e.id().toString());
        ps.setString(2, e.type());
        ps.setString(3, e.aggregateType());
        ps.setString(4, e.aggregateId());
        ps.setBoolean(5, p.ordered());
        ps.setString(6, e.payload());
        ps.setString(7, HeaderCodec.encode(e.headers()));
        ps.setString(8, e.destination());
        ps.setLong(9, e.availableAt().map(Instant::toEpochMilli).filter(t -> t > at).orElse(at));
        ps.setLong(10, at);
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
      throw wrap("enqueueing " + events.size() + " event(s)", e);
    }
  }

  // ----------------------------------------------------------------------------------------------------- relays

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

  @Override
  public List<ClaimedEvent> claim(String token, List<String> routes, Instant now, Instant leaseUntil, int limit) {
    String[] sql = routes.isEmpty() ? claimAll : claimsByRoutes.computeIfAbsent(List.copyOf(routes),
        this::claimStatements);
    long at = now.toEpochMilli();
    long until = leaseUntil.toEpochMilli();
    List<ClaimedEvent> claimed;
    if (dialect == JdbcDialect.POSTGRESQL) {
      claimed = autoCommit("claiming due events", c -> query(c, sql[0], ps -> {
        ps.setString(1, token);
        ps.setLong(2, until);
        ps.setLong(3, until);
        ps.setLong(4, at);
        ps.setInt(bindRoutes(ps, 5, routes), limit);
      }, JdbcOutboxStore::readClaimed));
    } else {
      // READ COMMITTED: no gap locks on MariaDB, so relays skip each other's rows instead of blocking
      claimed = transaction("claiming due events", dialect == JdbcDialect.MARIADB, c -> {
        List<ClaimedEvent> found = query(c, sql[1], ps -> {
          ps.setLong(1, at);
          ps.setInt(bindRoutes(ps, 2, routes), limit);
        }, JdbcOutboxStore::readClaimed);
        if (!found.isEmpty()) {
          try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
              + " SET lease_owner = ?, lease_until = ?, available_at = ? WHERE seq IN (" + marks(found.size()) + ")")) {
            ps.setString(1, token);
            ps.setLong(2, until);
            ps.setLong(3, until);
            bindSeqs(ps, 4, found);
            ps.executeUpdate();
          }
        }
        return found;
      });
    }
    claimed.sort(Comparator.comparingLong(ClaimedEvent::seq));
    return claimed;
  }

  private static ClaimedEvent readClaimed(ResultSet rs) throws SQLException {
    int attempts = rs.getInt(9);
    OutboxMessage m = new OutboxMessage(UUID.fromString(rs.getString(2).trim()), rs.getString(3), rs.getString(4),
        rs.getString(5), rs.getString(6), HeaderCodec.decode(rs.getString(7)), rs.getString(8), attempts + 1,
        Instant.ofEpochMilli(rs.getLong(11)));
    return new ClaimedEvent(rs.getLong(1), m, attempts, rs.getInt(10));
  }

  @Override
  public int finish(String token, List<ClaimedEvent> delivered, List<FailedDelivery> failures,
      boolean deleteDelivered, Instant now) {
    if (delivered.isEmpty() && failures.isEmpty()) {
      return 0;
    }
    long at = now.toEpochMilli();
    return transaction("recording deliveries", false, c -> {
      int changed = 0;
      for (int from = 0; from < delivered.size(); from += 500) {
        List<ClaimedEvent> chunk = delivered.subList(from, Math.min(delivered.size(), from + 500));
        String sql = deleteDelivered
            ? "DELETE FROM " + table + " WHERE lease_owner = ? AND seq IN (" + marks(chunk.size()) + ")"
            : "UPDATE " + table + " SET status = 'delivered', delivered_at = ?, attempts = attempts + 1,"
                + " lease_owner = NULL, lease_until = NULL, last_error = NULL WHERE lease_owner = ? AND seq IN ("
                + marks(chunk.size()) + ")";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          int i = 1;
          if (!deleteDelivered) {
            ps.setLong(i++, at);
          }
          ps.setString(i++, token);
          bindSeqs(ps, i, chunk);
          changed += ps.executeUpdate();
        }
      }
      return failures.isEmpty() ? changed : changed + recordFailures(c, token, failures, at);
    });
  }

  private int recordFailures(Connection c, String token, List<FailedDelivery> failures, long now) throws SQLException {
    // one statement per failure, not a batch: a batch may report SUCCESS_NO_INFO, and only a row still leased to
    // this relay may get a history row (failures are the exception, so this costs little)
    List<FailedDelivery> recorded = new ArrayList<>(failures.size());
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET attempts = ?, status = ?,"
        + " available_at = ?, lease_owner = NULL, lease_until = NULL, last_error = ?"
        + " WHERE seq = ? AND lease_owner = ?")) {
      for (FailedDelivery f : failures) {
        ps.setInt(1, f.claimed().attempts() + 1);
        ps.setString(2, f.dead() ? "dead" : "pending");
        ps.setLong(3, f.nextAttempt().toEpochMilli());
        ps.setString(4, f.error());
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
      for (FailedDelivery f : recorded) {
        int attempt = f.claimed().attempts() + 1;
        ins.setLong(1, f.claimed().seq());
        ins.setInt(2, attempt);
        ins.setLong(3, now);
        ins.setString(4, f.error());
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

  @Override
  public int release(String token, Collection<ClaimedEvent> events, Instant now) {
    if (events.isEmpty()) {
      return 0;
    }
    List<Object> args = new ArrayList<>(List.of(now.toEpochMilli(), token));
    events.forEach(e -> args.add(e.seq()));
    return executeUpdate("releasing leased events", "UPDATE " + table + " SET available_at = ?, lease_owner = NULL,"
        + " lease_until = NULL WHERE lease_owner = ? AND seq IN (" + marks(events.size()) + ")", args.toArray());
  }

  // ------------------------------------------------------------------------------------------------- operators

  /** Drops the row a page query reads past {@code limit} to tell whether there is a next page; whether it did. */
  private static boolean dropLookAhead(List<?> rows, int limit) {
    boolean more = rows.size() > limit;
    if (more) {
      rows.remove(rows.size() - 1);
    }
    return more;
  }

  /** The operator side, on the store's own short transactions. */
  private final class Admin implements OutboxAdmin {

    @Override
    public OutboxPage list(OutboxQuery filter) {
      Objects.requireNonNull(filter, "query");
      return withConnection("listing events", c -> {
        List<OutboxEntry> rows = page(c, COLUMNS, filter, JdbcOutboxStore::readEntry);
        boolean more = dropLookAhead(rows, filter.limit());
        return new OutboxPage(List.copyOf(withHistory(c, rows)),
            more ? OptionalLong.of(rows.get(rows.size() - 1).seq()) : OptionalLong.empty());
      });
    }

    @Override
    public OutboxSummaryPage summaries(OutboxQuery filter) {
      Objects.requireNonNull(filter, "query");
      return withConnection("listing events", c -> {
        List<OutboxSummary> rows = page(c, SUMMARY_COLUMNS, filter, JdbcOutboxStore::readSummary);
        boolean more = dropLookAhead(rows, filter.limit());
        Map<Long, List<OutboxAttempt>> history = history(c, rows.stream().map(OutboxSummary::seq).toList());
        List<OutboxSummary> out = new ArrayList<>(rows.size());
        for (OutboxSummary e : rows) {
          out.add(new OutboxSummary(e.seq(), e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.ordered(),
              e.payloadBytes(), e.payloadSealed(), e.destination(), e.status(), e.attempts(),
              e.attemptsSinceReplay(), e.availableAt(), e.leaseOwner(), e.leaseUntil(), e.lastError(),
              e.createdAt(), e.finishedAt(), history.getOrDefault(e.seq(), List.of())));
        }
        return new OutboxSummaryPage(List.copyOf(out),
            more ? OptionalLong.of(rows.get(rows.size() - 1).seq()) : OptionalLong.empty());
      });
    }

    /** The rows of a page (one more than the limit when there are more), by {@code seq}. */
    private <T> List<T> page(Connection c, String columns, OutboxQuery filter, RowReader<T> reader)
        throws SQLException {
      List<Object> args = new ArrayList<>();
      String sql = "SELECT " + columns + " FROM " + table + " WHERE seq > ?" + where(filter, args)
          + " ORDER BY seq LIMIT ?";
      return query(c, sql, ps -> {
        ps.setLong(1, filter.afterSeq());
        ps.setInt(bind(ps, 2, args), filter.limit() + 1);
      }, reader);
    }

    @Override
    public Optional<OutboxEntry> find(UUID id) {
      Objects.requireNonNull(id, "id");
      return withConnection("finding event " + id, c -> {
        List<OutboxEntry> found = query(c, "SELECT " + COLUMNS + " FROM " + table + " WHERE id = ?",
            ps -> ps.setString(1, id.toString()), JdbcOutboxStore::readEntry);
        return found.isEmpty() ? Optional.<OutboxEntry>empty() : Optional.of(withHistory(c, found).get(0));
      });
    }

    @Override
    public boolean replay(UUID id, Instant now) {
      Objects.requireNonNull(id, "id");
      return executeUpdate("replaying event " + id, "UPDATE " + table + " SET status = 'pending',"
          + " attempt_base = attempts, available_at = ?, lease_owner = NULL, lease_until = NULL, delivered_at = NULL"
          + " WHERE id = ? AND status <> 'pending'", now.toEpochMilli(), id.toString()) == 1;
    }

    /** Batch after batch on one connection in auto-commit mode: each batch's update is its own transaction. */
    @Override
    public int replayAll(OutboxQuery filter, Instant now) {
      OutboxStatus status = filter.status().orElseThrow(() -> new IllegalArgumentException(
          "a bulk replay needs a status, usually DEAD"));
      if (status == OutboxStatus.PENDING) {
        throw new IllegalArgumentException("pending events are already going to be sent");
      }
      List<Object> args = new ArrayList<>();
      String select = "SELECT seq FROM " + table + " WHERE seq > ?" + where(filter, args) + " ORDER BY seq LIMIT ?";
      return autoCommit("replaying events", c -> {
        int total = 0;
        long after = filter.afterSeq();
        while (true) {
          long from = after;
          List<Long> seqs = query(c, select, ps -> {
            ps.setLong(1, from);
            ps.setInt(bind(ps, 2, args), filter.limit());
          }, rs -> rs.getLong(1));
          if (seqs.isEmpty()) {
            return total;
          }
          try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET status = 'pending',"
              + " attempt_base = attempts, available_at = ?, lease_owner = NULL, lease_until = NULL,"
              + " delivered_at = NULL WHERE status = ? AND seq IN (" + marks(seqs.size()) + ")")) {
            ps.setLong(1, now.toEpochMilli());
            ps.setString(2, column(status));
            bind(ps, 3, seqs);
            total += ps.executeUpdate();
          }
          after = seqs.get(seqs.size() - 1);
        }
      });
    }

    @Override
    public boolean discard(UUID id, Instant now) {
      Objects.requireNonNull(id, "id");
      long at = now.toEpochMilli();
      return executeUpdate("discarding event " + id, "UPDATE " + table + " SET status = 'discarded', delivered_at = ?,"
          + " lease_owner = NULL, lease_until = NULL WHERE id = ? AND (status = 'dead' OR status = 'pending'"
          + " AND (lease_owner IS NULL OR lease_until <= ?))", at, id.toString(), at) == 1;
    }

    @Override
    public int purge(Instant finishedBefore, int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be positive, got " + limit);
      }
      // oldest finish first, along the index on delivered_at (V7): each batch reads only the rows it deletes. On
      // MariaDB seq (in every InnoDB index) makes the order total, as statement-based replication wants
      String finished = " WHERE delivered_at <= ? AND status IN ('delivered', 'discarded')";
      String sql = switch (dialect) {
        case POSTGRESQL -> "DELETE FROM " + table + " WHERE seq IN (SELECT seq FROM " + table + finished
            + " ORDER BY delivered_at LIMIT ? FOR UPDATE SKIP LOCKED)";
        case MARIADB -> "DELETE FROM " + table + finished + " ORDER BY delivered_at, seq LIMIT ?";
        case H2 -> "DELETE FROM " + table + finished + " FETCH FIRST ? ROWS ONLY";
      };
      return executeUpdate("purging finished events", sql, finishedBefore.toEpochMilli(), limit);
    }

    @Override
    public OutboxStats stats(Set<OutboxStatus> statuses, Instant now) {
      return withConnection("reading outbox statistics", c -> {
        Map<OutboxStatus, Long> counts = new EnumMap<>(OutboxStatus.class);
        for (OutboxStatus s : statuses) {
          counts.put(s, query(c, "SELECT COUNT(*) FROM " + table + " WHERE status = ?",
              ps -> ps.setString(1, column(s)), rs -> rs.getLong(1)).get(0));
        }
        Instant oldest = statuses.contains(OutboxStatus.PENDING) ? query(c, "SELECT MIN(created_at) FROM " + table
            + " WHERE status = 'pending'", ps -> { }, rs -> instantOrNull(rs, 1)).get(0) : null;
        return new OutboxStats(Map.copyOf(counts), Optional.ofNullable(oldest)
            .map(t -> Duration.ofMillis(Math.max(0, now.toEpochMilli() - t.toEpochMilli()))));
      });
    }
  }

  // ---------------------------------------------------------------------------------------------------- helpers

  private static String where(OutboxQuery q, List<Object> args) {
    StringBuilder w = new StringBuilder();
    and(w, args, "status", q.status().map(JdbcOutboxStore::column));
    and(w, args, "event_type", q.type());
    and(w, args, "destination", q.destination());
    and(w, args, "aggregate_type", q.aggregateType());
    and(w, args, "aggregate_id", q.aggregateId());
    return w.toString();
  }

  private static void and(StringBuilder where, List<Object> args, String column, Optional<String> value) {
    value.ifPresent(v -> {
      where.append(" AND ").append(column).append(" = ?");
      args.add(v);
    });
  }

  private static void bindSeqs(PreparedStatement ps, int at, List<ClaimedEvent> events) throws SQLException {
    for (ClaimedEvent e : events) {
      ps.setLong(at++, e.seq());
    }
  }

  private List<OutboxEntry> withHistory(Connection c, List<OutboxEntry> rows) throws SQLException {
    if (rows.isEmpty()) {
      return rows;
    }
    Map<Long, List<OutboxAttempt>> history = history(c, rows.stream().map(OutboxEntry::seq).toList());
    List<OutboxEntry> out = new ArrayList<>(rows.size());
    for (OutboxEntry e : rows) {
      List<OutboxAttempt> h = history.getOrDefault(e.seq(), List.of());
      out.add(new OutboxEntry(e.seq(), e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.ordered(), e.payload(),
          e.headers(), e.destination(), e.status(), e.attempts(), e.attemptsSinceReplay(), e.availableAt(),
          e.leaseOwner(), e.leaseUntil(), e.lastError(), e.createdAt(), e.finishedAt(), h));
    }
    return out;
  }

  /** The attempt history of these rows, oldest first, by row; a row without one is not in the map. */
  private Map<Long, List<OutboxAttempt>> history(Connection c, List<Long> seqs) throws SQLException {
    if (seqs.isEmpty()) {
      return Map.of();
    }
    List<Map.Entry<Long, OutboxAttempt>> attempts = query(c, "SELECT event_seq, attempt, attempted_at, error,"
        + " response_code FROM " + attemptTable + " WHERE event_seq IN (" + marks(seqs.size()) + ")"
        + " ORDER BY event_seq, attempt", ps -> bind(ps, 1, seqs), rs -> {
          int code = rs.getInt(5);
          Integer response = rs.wasNull() ? null : code;
          return Map.entry(rs.getLong(1), new OutboxAttempt(rs.getInt(2), Instant.ofEpochMilli(rs.getLong(3)),
              rs.getString(4), response));
        });
    Map<Long, List<OutboxAttempt>> history = new HashMap<>();
    for (Map.Entry<Long, OutboxAttempt> a : attempts) {
      history.computeIfAbsent(a.getKey(), k -> new ArrayList<>()).add(a.getValue());
    }
    history.replaceAll((seq, h) -> List.copyOf(h));
    return history;
  }

  private static OutboxEntry readEntry(ResultSet rs) throws SQLException {
    int attempts = rs.getInt(11);
    return new OutboxEntry(rs.getLong(1), UUID.fromString(rs.getString(2).trim()), rs.getString(3), rs.getString(4),
        rs.getString(5), rs.getBoolean(6), rs.getString(7), HeaderCodec.decode(rs.getString(8)), rs.getString(9),
        OutboxStatus.valueOf(rs.getString(10).trim().toUpperCase(Locale.ROOT)), attempts, attempts - rs.getInt(12),
        Instant.ofEpochMilli(rs.getLong(13)), rs.getString(14), instantOrNull(rs, 15), rs.getString(16),
        Instant.ofEpochMilli(rs.getLong(17)), instantOrNull(rs, 18), List.of());
  }

  private static OutboxSummary readSummary(ResultSet rs) throws SQLException {
    int attempts = rs.getInt(11);
    return new OutboxSummary(rs.getLong(1), UUID.fromString(rs.getString(2).trim()), rs.getString(3),
        rs.getString(4), rs.getString(5), rs.getBoolean(6), rs.getLong(7), Encryption.TEXT_PREFIX.equals(
        rs.getString(8)), rs.getString(9), OutboxStatus.valueOf(rs.getString(10).trim().toUpperCase(Locale.ROOT)),
        attempts, attempts - rs.getInt(12), Instant.ofEpochMilli(rs.getLong(13)), rs.getString(14),
        instantOrNull(rs, 15), rs.getString(16), Instant.ofEpochMilli(rs.getLong(17)), instantOrNull(rs, 18),
        List.of());
  }

  /** A status as the status column spells it. */
  private static String column(OutboxStatus status) {
    return status.name().toLowerCase(Locale.ROOT);
  }

  /** Builds a {@link JdbcOutboxStore}. Mutable and not thread-safe. */
  public static final class Builder {
    private final DataSource dataSource;
    private JdbcDialect dialect;
    private String table = SchemaScript.OUTBOX.defaultTable();
    private int historyLimit = 20;
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
      this.table = SchemaScript.checkTable(table);
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

    /** Create the tables at build time where missing (default false: use your migration tool). */
    public Builder createSchemaIfMissing(boolean create) {
      this.createSchema = create;
      return this;
    }

    public JdbcOutboxStore build() {
      JdbcOutboxStore store = new JdbcOutboxStore(this);
      if (createSchema) {
        store.createSchemaIfMissing();
      }
      return store;
    }
  }
}
