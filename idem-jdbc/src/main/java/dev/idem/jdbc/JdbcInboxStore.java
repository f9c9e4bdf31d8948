package dev.idem.jdbc;

import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.internal.SchemaScript;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.spi.InboxAdmin;
import dev.idem.outbox.spi.InboxStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * The inbox on a JDBC database (PostgreSQL, MariaDB, H2): the table {@code idem_inbox} (schema file
 * {@code db/idem/<dialect>/V2__idem_outbox.sql}), one row per (consumer, event id).
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).build()).build();
 * }</pre>
 *
 * <p>Implementation note, batches: {@link #record} writes the records of a batch in one statement, in Unicode code
 * point order of their ids (the order of the key on MariaDB, {@code utf8mb4_nopad_bin}), so every transaction takes
 * its key locks in one global order: two batches can wait for each other only one way. PostgreSQL inserts from
 * {@code unnest} of arrays ({@code ON CONFLICT DO NOTHING RETURNING}), one SQL text for every batch size. MariaDB
 * inserts multi-row {@code INSERT IGNORE ... RETURNING}: on 10.11, {@code RETURNING} lists only the rows actually
 * inserted, also after waiting for a concurrent transaction that inserted the same key and then committed (not
 * listed) or rolled back (inserted and listed). H2 inserts row by row. The records get {@code processed_at} in that
 * insert (they become visible only when the caller commits), so only non-null results need a second statement: one
 * JDBC batch of updates. The events found already recorded are read in one statement that locks exactly their rows:
 * {@code = ANY(?) FOR SHARE} on PostgreSQL, and on MariaDB a {@code UNION ALL} of primary key lookups, as an
 * {@code IN} list may lock (and wait for) every row of the consumer.
 *
 * <p>Implementation note, the first-delivery order ({@link #recordLast}, PostgreSQL only): one plain insert of the
 * batch with its results from {@code unnest} of arrays, in the same lock order, sent with the {@code COMMIT} when the
 * store owns the transaction; an event recorded already fails it on the key (the server skips the {@code COMMIT}).
 * MariaDB and H2 do not offer that order: on MariaDB a deadlock the handler caught would already have rolled the
 * transaction back, and the records' insert would then commit without the effects.
 *
 * <p>Implementation note, a handler that catches an SQL error: PostgreSQL aborts the whole transaction on an error,
 * and pgjdbc then turns the commit into a silent rollback, so a handler that catches one (say, "insert and ignore a
 * unique violation") would lose the inbox records and every effect while the call reports them processed.
 * {@link #keep}'s statement fails in an aborted transaction (SQLState {@code 25P02}); where no result is to be kept,
 * a probe reads the first new record back instead. That probe, and the update counts, also catch a handler that
 * rolled the transaction back, or caught an error for which the database did (a deadlock on MariaDB rolls the whole
 * transaction back and later statements run in a new one): the record is then gone. A handler that switched
 * auto-commit on is caught as well. Each of these is an {@link InboxHandlerException}: the handler broke the
 * transaction.
 */
public final class JdbcInboxStore extends JdbcStore implements InboxStore {
  /** PostgreSQL's "current transaction is aborted, commands ignored until end of transaction block". */
  private static final String IN_FAILED_TRANSACTION = "25P02";
  private static final Set<String> REFUSES_EVERYONE_STATES =
      Set.of("25006", "42501", "42P01", "3D000", "57P01", "57P02", "57P03");
  private static final Set<Integer> REFUSES_EVERYONE_CODES =
      Set.of(1290, 1036, 1021, 1114, 1040, 1044, 1045, 1142, 1146);
  private static final Set<String> CONFLICT_STATES = Set.of("40001", "40P01", "55P03");
  private static final Set<Integer> CONFLICT_CODES = Set.of(1213, 1205);

  /** H2: one row; PostgreSQL: the whole batch; MariaDB: up to VALUES, the rows and RETURNING added per batch. */
  private final String insert;
  /** PostgreSQL: the whole read; MariaDB: the read of one event, joined per batch; H2: up to "IN (". */
  private final String selectMany;
  private final String probe;
  private final String keepResult;
  /** PostgreSQL: the first-delivery order's insert of a whole batch with its results, and the same with COMMIT. */
  private final String insertLast;
  private final String insertLastAndCommit;
  private final Admin admin = new Admin();

  private JdbcInboxStore(Builder b) {
    super(b.dataSource, b.dialect, b.table, b.table, SchemaScript.INBOX);
    String columns = " (consumer, event_id, source, payload_hash, received_at, processed_at)";
    // a shared locking read sees the latest committed row whatever the transaction's snapshot; shared, because
    // concurrent duplicates all hold a shared lock on the key after their insert found it (an exclusive request
    // from each of them would deadlock on MariaDB)
    String read = "SELECT event_id, payload_hash, result, received_at FROM " + table
        + " WHERE consumer = ? AND event_id";
    switch (dialect) {
      case POSTGRESQL:
        insert = "INSERT INTO " + table + columns
            + " SELECT CAST(? AS VARCHAR), u.event_id, u.source, u.payload_hash, CAST(? AS BIGINT), CAST(? AS BIGINT)"
            + " FROM unnest(?::varchar[], ?::varchar[], ?::char(64)[]) WITH ORDINALITY"
            + " AS u(event_id, source, payload_hash, n) ORDER BY u.n"
            + " ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id";
        selectMany = read + " = ANY(?) FOR SHARE";
        break;
      case MARIADB:
        // every value is checked against its column first, so IGNORE only ever ignores the duplicate key
        insert = "INSERT IGNORE INTO " + table + columns + " VALUES ";
        // InnoDB locks every row a locking read examines, and for "consumer = ? AND event_id IN (...)" the optimizer
        // may scan all of the consumer's rows (it does on small tables), waiting for other transactions' new rows
        // and deadlocking with them; a UNION ALL of the single-event read is a primary key lookup per id, always
        selectMany = "(" + read + " = ? LOCK IN SHARE MODE)";
        break;
      default:
        insert = "INSERT INTO " + table + columns + " VALUES (?, ?, ?, ?, ?, ?)";
        selectMany = read + " IN ("; // H2's reads take no locks
    }
    insertLast = "INSERT INTO " + table + " (consumer, event_id, source, payload_hash, received_at, processed_at,"
        + " result) SELECT CAST(? AS VARCHAR), u.event_id, u.source, u.payload_hash, CAST(? AS BIGINT),"
        + " CAST(? AS BIGINT), u.result FROM unnest(?::varchar[], ?::varchar[], ?::char(64)[], ?::text[])"
        + " WITH ORDINALITY AS u(event_id, source, payload_hash, result, n) ORDER BY u.n";
    insertLastAndCommit = insertLast + "; COMMIT";
    keepResult = "UPDATE " + table + " SET result = ? WHERE consumer = ? AND event_id = ?";
    probe = "SELECT 1 FROM " + table + " WHERE consumer = ? AND event_id = ?";
  }

  /** A builder of a store on {@code dataSource}; the dialect is detected from it unless set. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /**
   * Whose failure {@code error} is. The inbox's own statements and its commit failing ({@link StoreException}: ids
   * and sizes were checked before) are contention for a deadlock, a serialization failure or a lock timeout; the
   * message's for an integrity or data error (SQLState classes 23 and 22, e.g. a deferred constraint: the handler's
   * writes); an outage for a failure without SQLState, a transient or connection failure, a schema fault (class 42,
   * which refuses every message alike) and an SQLState by which the database refuses everyone; and for any other
   * (a trigger's exception or a program limit as the handler's writes are flushed at the commit) the message's when
   * the database answers a health check ({@link #available}), else an outage. An SQL failure in a handler's causes
   * is an outage when its SQLState or error code is one by which a database refuses everyone's work ({@link
   * #refusesEveryone}), contention for a conflict, and for a lost connection an outage only when the database fails
   * a health check too ({@link #available}); any other, a statement timeout included, is the message's.
   */
  @Override
  public Fault fault(Throwable error) {
    return fault(error, this::available);
  }

  static Fault fault(Throwable error, BooleanSupplier databaseAnswers) {
    SQLException q = firstSqlException(error);
    if (error instanceof StoreException s) {
      String state = s.sqlState() != null ? s.sqlState() : q != null && q.getSQLState() != null ? q.getSQLState() : "";
      int code = q == null ? 0 : q.getErrorCode();
      if (s.isLockTimeout() || q instanceof SQLTransactionRollbackException || isConflict(state, code)) {
        return Fault.CONTENTION;
      }
      if (state.startsWith("23") || state.startsWith("22")) {
        return Fault.OTHER;
      }
      if (state.isEmpty() || s.isTransient() || s.isSchemaFault() || refusesEveryone(state, code)
          || isConnectionFailure(q, state)) {
        return Fault.OUTAGE;
      }
      // an error the database raised about this transaction's content, mostly the handler's writes flushed at the
      // commit (a trigger's exception, P0001 or MariaDB's SIGNAL 45000; a program limit, 54000): the message's while
      // the database answers, else an outage
      return databaseAnswers.getAsBoolean() ? Fault.OTHER : Fault.OUTAGE;
    }
    if (q == null) {
      return Fault.OTHER;
    }
    String state = q.getSQLState() == null ? "" : q.getSQLState();
    int code = q.getErrorCode();
    if (refusesEveryone(state, code)) {
      return Fault.OUTAGE;
    }
    if (q instanceof SQLTransactionRollbackException || isConflict(state, code)) {
      return Fault.CONTENTION;
    }
    if (isConnectionFailure(q, state)) {
      return databaseAnswers.getAsBoolean() ? Fault.OTHER : Fault.OUTAGE;
    }
    return Fault.OTHER;
  }

  private static boolean isConnectionFailure(SQLException q, String state) {
    return q instanceof SQLTransientConnectionException || q instanceof SQLNonTransientConnectionException
        || q instanceof SQLRecoverableException || state.startsWith("08");
  }

  /**
   * Whether {@code state} or {@code code} is one by which a database refuses every transaction alike: SQLStates
   * (PostgreSQL: read-only, insufficient privilege, undefined table, invalid catalog, shutdowns; the classes 28
   * authorization, 53 resources, 58 system errors) and error codes (MariaDB: read-only, read-only table, disk full,
   * table full, too many connections, access denied, missing table).
   */
  static boolean refusesEveryone(String state, int code) {
    return REFUSES_EVERYONE_STATES.contains(state) || state.startsWith("28") || state.startsWith("53")
        || state.startsWith("58") || REFUSES_EVERYONE_CODES.contains(code);
  }

  /** A serialization failure, a deadlock or a lock that could not be had (PostgreSQL and MariaDB). */
  private static boolean isConflict(String state, int code) {
    return CONFLICT_STATES.contains(state) || CONFLICT_CODES.contains(code);
  }

  private static SQLException firstSqlException(Throwable error) {
    int depth = 0;
    for (Throwable t = error; t != null && depth < 64; t = t.getCause() == t ? null : t.getCause(), depth++) {
      if (t instanceof SQLException q) {
        return q;
      }
    }
    return null;
  }

  @Override
  public boolean available() {
    try (Connection c = dataSource.getConnection()) {
      return c.isValid(5);
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  @Override
  public InboxAdmin admin() {
    return admin;
  }

  @Override
  public List<Recorded> record(StoreTransaction tx, String consumer, List<Entry> events, Instant now) {
    Connection c = JdbcTransaction.callerConnection(tx, table, dialect);
    int n = events.size();
    if (n == 0) {
      return List.of(); // MariaDB's multi-row insert has no form without rows
    }
    List<Entry> sorted = new ArrayList<>(events);
    sorted.sort((x, y) -> byCodePoint(x.eventId(), y.eventId()));
    long at = now.toEpochMilli();
    Set<String> inserted;
    try {
      inserted = insertMany(c, consumer, sorted, at);
    } catch (SQLException e) {
      throw wrap("recording " + n + " events for " + consumer, e);
    }
    List<String> existing = new ArrayList<>();
    for (Entry e : sorted) {
      if (!inserted.contains(e.eventId())) {
        existing.add(e.eventId());
      }
    }
    Map<String, Stored> stored = existing.isEmpty() ? Map.of() : readMany(c, consumer, existing);
    Recorded fresh = new Recorded(Status.NEW, null, now);
    List<Recorded> out = new ArrayList<>(n);
    for (Entry e : events) {
      if (inserted.contains(e.eventId())) {
        out.add(fresh);
        continue;
      }
      Stored s = stored.get(e.eventId());
      if (s == null) {
        throw new IllegalStateException("event " + e.eventId() + " for " + consumer + " conflicted but is not there");
      }
      out.add(new Recorded(s.hash().trim().equals(e.digest()) ? Status.DUPLICATE : Status.MISMATCH, s.result(),
          Instant.ofEpochMilli(s.receivedAt())));
    }
    return out;
  }

  /** On PostgreSQL: a handler's error aborts the transaction, so the records' write after it fails and tells. */
  @Override
  public boolean recordsLast() {
    return dialect == JdbcDialect.POSTGRESQL;
  }

  /**
   * One plain {@code INSERT} of the batch with its results, in lock order; when this store owns {@code tx} (and it is
   * not marked rollback-only), the insert and the COMMIT go as one execution, so a first delivery costs the round
   * trips of the handler's own transaction. A record already there fails the insert with a unique violation (the
   * server then skips the COMMIT): nothing is written, and this returns false. So does a handler that caught an error
   * that aborted the transaction ({@code 25P02}): the usual order then skips a duplicate, and fails a new event with
   * that error. A handler that switched auto-commit on had its writes committed by the switch: the records are then
   * inserted after them (committed too, so that a redelivery of a new event is a duplicate), and this throws.
   */
  @Override
  public boolean recordLast(StoreTransaction tx, String consumer, List<Entry> events, List<String> results,
      Instant now) {
    if (!recordsLast()) {
      throw new UnsupportedOperationException(name() + " on " + dialect + " records events before the handler runs");
    }
    if (events.isEmpty()) {
      throw new IllegalArgumentException("events must not be empty");
    }
    if (results.size() != events.size()) {
      throw new IllegalArgumentException(results.size() + " results for " + events.size() + " events");
    }
    Connection c = JdbcTransaction.driverConnectionOf(tx);
    String firstId = events.get(0).eventId();
    boolean autoCommit;
    try {
      autoCommit = c.getAutoCommit();
    } catch (SQLException e) {
      throw wrap("checking the transaction after the handler", e);
    }
    int n = events.size();
    Integer[] order = new Integer[n];
    for (int k = 0; k < n; k++) {
      order[k] = k;
    }
    Arrays.sort(order, (x, y) -> byCodePoint(events.get(x).eventId(), events.get(y).eventId()));
    List<Entry> sorted = new ArrayList<>(n);
    String[] kept = new String[n];
    for (int k = 0; k < n; k++) {
      sorted.add(events.get(order[k]));
      kept[k] = results.get(order[k]);
    }
    JdbcTransaction committable = autoCommit ? null : JdbcTransaction.committableWithLastWrite(tx);
    try (PreparedStatement ps = c.prepareStatement(committable == null ? insertLast : insertLastAndCommit)) {
      bindArrays(c, ps, consumer, sorted, now.toEpochMilli());
      ps.setArray(7, c.createArrayOf("text", kept));
      ps.execute();
    } catch (SQLException e) {
      if (autoCommit) {
        InboxHandlerException broken = autoCommitOn(consumer, firstId);
        broken.addSuppressed(e);
        throw broken;
      }
      if (SqlErrors.isUniqueViolation(dialect, e) || IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
        // recorded before; or the handler caught an error that aborted the transaction, which for a duplicate the
        // usual order, where its handler does not run, must get to decide
        tx.setRollbackOnly();
        return false;
      }
      throw wrap("recording " + n + " events for " + consumer, e);
    }
    if (autoCommit) {
      // switching auto-commit on committed the handler's writes; the records, inserted in that mode, followed them,
      // so that a redelivery is a duplicate, as in the usual order. The call fails all the same
      throw autoCommitOn(consumer, firstId);
    }
    if (committable != null) {
      committable.markCommitted();
    }
    return true;
  }

  private static InboxHandlerException autoCommitOn(String consumer, String eventId) {
    // the handler committed part of the work on its own
    return new InboxHandlerException(consumer, eventId, new IllegalStateException("the handler switched auto-commit"
        + " on: the inbox and the effects must commit together, in the caller's transaction"));
  }

  /** Writes the records of {@code sorted} in its order (lock order); returns the ids inserted. */
  private Set<String> insertMany(Connection c, String consumer, List<Entry> sorted, long now) throws SQLException {
    int size = sorted.size();
    Set<String> inserted = new HashSet<>();
    if (dialect == JdbcDialect.H2) {
      for (Entry e : sorted) {
        if (insertOne(c, consumer, e, now)) {
          inserted.add(e.eventId());
        }
      }
      return inserted;
    }
    String sql = dialect == JdbcDialect.POSTGRESQL ? insert
        : insert + String.join(", ", Collections.nCopies(size, "(?, ?, ?, ?, ?, ?)")) + " RETURNING event_id";
    inserted.addAll(query(c, sql, ps -> {
      if (dialect == JdbcDialect.POSTGRESQL) {
        bindArrays(c, ps, consumer, sorted, now);
      } else {
        int p = 1;
        for (Entry e : sorted) {
          p = bindRecord(ps, p, consumer, e, now);
        }
      }
    }, rs -> rs.getString(1)));
    return inserted;
  }

  /**
   * PostgreSQL's inserts from {@code unnest}: the consumer and the time, then the records' ids, sources and digests as
   * three arrays (parameters 1 to 6).
   */
  private static void bindArrays(Connection c, PreparedStatement ps, String consumer, List<Entry> sorted, long now)
      throws SQLException {
    int size = sorted.size();
    String[] ids = new String[size];
    String[] sources = new String[size];
    String[] hashes = new String[size];
    for (int k = 0; k < size; k++) {
      Entry e = sorted.get(k);
      ids[k] = e.eventId();
      sources[k] = e.source();
      hashes[k] = e.digest();
    }
    ps.setString(1, consumer);
    ps.setLong(2, now);
    ps.setLong(3, now);
    ps.setArray(4, c.createArrayOf("varchar", ids));
    ps.setArray(5, c.createArrayOf("varchar", sources));
    ps.setArray(6, c.createArrayOf("varchar", hashes));
  }

  private boolean insertOne(Connection c, String consumer, Entry e, long now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(insert)) {
      bindRecord(ps, 1, consumer, e, now);
      return ps.executeUpdate() == 1;
    } catch (SQLException ex) {
      if (SqlErrors.isUniqueViolation(dialect, ex)) {
        return false; // H2 keeps the transaction usable after a failed statement
      }
      throw ex;
    }
  }

  /** Binds one record's six columns from parameter {@code at} on; returns the next parameter. */
  private static int bindRecord(PreparedStatement ps, int at, String consumer, Entry e, long now) throws SQLException {
    ps.setString(at, consumer);
    ps.setString(at + 1, e.eventId());
    ps.setString(at + 2, e.source());
    ps.setString(at + 3, e.digest());
    ps.setLong(at + 4, now);
    ps.setLong(at + 5, now);
    return at + 6;
  }

  /** The records of {@code eventIds} (all known to exist), read with a shared lock, by id. */
  private Map<String, Stored> readMany(Connection c, String consumer, List<String> eventIds) {
    int size = eventIds.size();
    String sql = switch (dialect) {
      case POSTGRESQL -> selectMany;
      case MARIADB -> String.join(" UNION ALL ", Collections.nCopies(size, selectMany));
      case H2 -> selectMany + marks(size) + ")";
    };
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      if (dialect == JdbcDialect.POSTGRESQL) {
        ps.setString(1, consumer);
        ps.setArray(2, c.createArrayOf("varchar", eventIds.toArray(new String[0])));
      } else if (dialect == JdbcDialect.MARIADB) {
        for (int k = 0; k < size; k++) {
          ps.setString(2 * k + 1, consumer);
          ps.setString(2 * k + 2, eventIds.get(k));
        }
      } else {
        ps.setString(1, consumer);
        for (int k = 0; k < size; k++) {
          ps.setString(k + 2, eventIds.get(k));
        }
      }
      Map<String, Stored> stored = new HashMap<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          stored.put(rs.getString(1), new Stored(rs.getString(2), rs.getString(3), rs.getLong(4)));
        }
      }
      return stored;
    } catch (SQLException e) {
      throw wrap("reading " + size + " events for " + consumer, e);
    }
  }

  /** What a locking read found of a record. */
  private record Stored(String hash, String result, long receivedAt) {}

  @Override
  public void keep(StoreTransaction tx, String consumer, List<String> eventIds, List<String> results) {
    if (eventIds.isEmpty()) {
      return;
    }
    Connection c = JdbcTransaction.driverConnectionOf(tx);
    if (!keepResults(c, consumer, eventIds, results)) {
      checkStillRecorded(c, consumer, eventIds.get(0));
    }
    try {
      if (c.getAutoCommit()) {
        throw autoCommitOn(consumer, eventIds.get(0));
      }
    } catch (SQLException e) {
      throw wrap("checking the transaction after the handler", e);
    }
  }

  /** Keeps the non-null results, in one JDBC batch; returns whether that checked every record's presence. */
  private boolean keepResults(Connection c, String consumer, List<String> eventIds, List<String> results) {
    if (results.stream().allMatch(Objects::isNull)) {
      return false;
    }
    try (PreparedStatement ps = c.prepareStatement(keepResult)) {
      for (int k = 0; k < results.size(); k++) {
        if (results.get(k) != null) {
          ps.setString(1, results.get(k));
          ps.setString(2, consumer);
          ps.setString(3, eventIds.get(k));
          ps.addBatch();
        }
      }
      int[] counts = ps.executeBatch();
      boolean unknown = false;
      for (int k = 0, row = 0; k < results.size(); k++) {
        if (results.get(k) != null) {
          int count = counts[row++];
          if (count == 0) {
            throw rowGone(consumer, eventIds.get(k));
          }
          unknown |= count == Statement.SUCCESS_NO_INFO;
        }
      }
      return !unknown; // a driver that reports no counts leaves the check to the probe
    } catch (SQLException e) {
      throw afterHandler(consumer, eventIds.get(0), "keeping the results of " + eventIds.size() + " events for "
          + consumer, e);
    }
  }

  /** Where no result is kept: the probe of the class notes, that the first new record is still there. */
  private void checkStillRecorded(Connection c, String consumer, String eventId) {
    try {
      if (!recorded(c, consumer, eventId)) {
        throw rowGone(consumer, eventId);
      }
    } catch (SQLException e) {
      throw afterHandler(consumer, eventId, "checking the transaction after the handler for " + consumer, e);
    }
  }

  private boolean recorded(Connection c, String consumer, String eventId) throws SQLException {
    return !query(c, probe, ps -> {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
    }, rs -> true).isEmpty();
  }

  private static InboxHandlerException rowGone(String consumer, String eventId) {
    return new InboxHandlerException(consumer, eventId, new IllegalStateException("the inbox record is gone from the"
        + " transaction: the handler rolled it back, or caught an error for which the database rolled it back (e.g. a"
        + " deadlock); roll back, and the event will be processed again"));
  }

  /**
   * What a failed statement after the handler means: on PostgreSQL, SQLState {@code 25P02} says an earlier statement
   * failed and the transaction is aborted; the store's own statements before the handler succeeded, so the handler
   * caught that error: a handler failure. Anything else is the store's.
   */
  private RuntimeException afterHandler(String consumer, String eventId, String what, SQLException e) {
    if (dialect == JdbcDialect.POSTGRESQL && IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
      SQLException aborted = new SQLException("the transaction was aborted by an error the handler caught; roll back"
          + " (a handler must rethrow SQL errors, or roll back to a savepoint it set to recover from one): "
          + e.getMessage(), e.getSQLState(), e.getErrorCode(), e);
      return new InboxHandlerException(consumer, eventId, aborted);
    }
    return wrap(what, e);
  }

  /** Unicode code point order: the order of the key on MariaDB ({@code utf8mb4_nopad_bin}). */
  private static int byCodePoint(String a, String b) {
    int i = 0;
    while (i < a.length() && i < b.length()) {
      int x = a.codePointAt(i);
      int y = b.codePointAt(i);
      if (x != y) {
        return Integer.compare(x, y);
      }
      i += Character.charCount(x);
    }
    return Integer.compare(a.length(), b.length());
  }

  /** The operator side, on the store's own short transactions. */
  private final class Admin implements InboxAdmin {
    @Override
    public boolean contains(String consumer, String eventId) {
      return withConnection("looking up event " + eventId, c -> recorded(c, consumer, eventId));
    }

    @Override
    public int purge(Instant receivedBefore, int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be positive, got " + limit);
      }
      long before = receivedBefore.toEpochMilli();
      return switch (dialect) {
        case POSTGRESQL -> executeUpdate("purging the inbox", "DELETE FROM " + table + " WHERE (consumer, event_id) IN"
            + " (SELECT consumer, event_id FROM " + table + " WHERE received_at <= ? ORDER BY received_at LIMIT ?"
            + " FOR UPDATE SKIP LOCKED)", before, limit);
        case MARIADB -> purgeOnMariaDb(before, limit);
        case H2 -> executeUpdate("purging the inbox", "DELETE FROM " + table + " WHERE received_at <= ?"
            + " FETCH FIRST ? ROWS ONLY", before, limit);
      };
    }

    /**
     * MariaDB: one transaction at READ COMMITTED reads the keys {@code FOR UPDATE SKIP LOCKED}, then deletes them by
     * primary key. A {@code DELETE} by range locks the first record past the cutoff as well (at any isolation), and so
     * waits for a consumer whose transaction has just recorded an event and has not ended.
     */
    private int purgeOnMariaDb(long receivedBefore, int limit) {
      return transaction("purging the inbox", true, c -> {
        List<String[]> keys = query(c, "SELECT consumer, event_id FROM " + table
            + " WHERE received_at <= ? ORDER BY received_at LIMIT ? FOR UPDATE SKIP LOCKED", ps -> {
              ps.setLong(1, receivedBefore);
              ps.setInt(2, limit);
            }, rs -> new String[] {rs.getString(1), rs.getString(2)});
        if (!keys.isEmpty()) {
          try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table
              + " WHERE consumer = ? AND event_id = ?")) {
            for (String[] key : keys) {
              ps.setString(1, key[0]);
              ps.setString(2, key[1]);
              ps.addBatch();
            }
            ps.executeBatch();
          }
        }
        return keys.size(); // the rows are locked by this transaction: each delete found its row
      });
    }
  }

  /** Builds a {@link JdbcInboxStore}. Mutable and not thread-safe. */
  public static final class Builder {
    private final DataSource dataSource;
    private JdbcDialect dialect;
    private String table = SchemaScript.INBOX.defaultTable();
    private boolean createSchema;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** The database's dialect (default: detected from the data source's metadata). */
    public Builder dialect(JdbcDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /** The inbox table (default {@code idem_inbox}). */
    public Builder table(String table) {
      this.table = SchemaScript.checkTable(table);
      return this;
    }

    /** Whether {@link #build} creates the inbox table where missing (default false: migrations create it). */
    public Builder createSchemaIfMissing(boolean create) {
      this.createSchema = create;
      return this;
    }

    public JdbcInboxStore build() {
      JdbcInboxStore store = new JdbcInboxStore(this);
      if (createSchema) {
        store.createSchemaIfMissing();
      }
      return store;
    }
  }
}
