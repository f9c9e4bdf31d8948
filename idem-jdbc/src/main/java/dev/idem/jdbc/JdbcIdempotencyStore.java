package dev.idem.jdbc;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.ConfigurationException;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdempotencyAdmin;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.internal.RecordCodec;
import dev.idem.jdbc.internal.SchemaScript;
import dev.idem.jdbc.internal.Sql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Idempotency records in a relational database: PostgreSQL, MariaDB/MySQL or H2, behind one dialect seam.
 * Thread-safe; share one per table.
 *
 * <p>Transactions come from the {@link DataSource}, one connection per transaction, unless the calling thread has
 * bound its own connection with {@link #useConnection(Connection)}: then the store runs on that connection, and if
 * the caller's transaction is already open the store joins it under a savepoint instead of committing.
 *
 * <p>Every statement is parameterised; failures become {@link StoreException}s that keep the SQLState and name the
 * store and the statement.
 */
public final class JdbcIdempotencyStore extends JdbcStore implements IdempotencyStore {
  private final Sql sql;
  private final int lockTimeoutSeconds;
  private final boolean commitWithLastRecordWrite;
  /** The partitions in partitioned-expiry mode, else null. */
  private final RecordPartitions partitions;
  private final String insertStatement;
  private final String insertAndCommitStatement;
  private final ThreadLocal<Connection> bound = new ThreadLocal<>();
  private final IdempotencyAdmin admin = new Admin();

  private JdbcIdempotencyStore(Builder b) {
    super(b.dataSource, b.dialect, b.name, b.table,
        b.partitionWidth == null ? SchemaScript.RECORD : SchemaScript.RECORD_PARTITIONED);
    this.sql = new Sql(dialect, b.table);
    this.lockTimeoutSeconds = (int) b.lockTimeout.toSeconds();
    this.commitWithLastRecordWrite = b.commitWithLastRecordWrite && dialect == JdbcDialect.POSTGRESQL;
    if (b.partitionWidth != null && dialect != JdbcDialect.POSTGRESQL) {
      throw new ConfigurationException("store '" + name + "': partitionedExpiry needs PostgreSQL, the database is "
          + dialect + "; build the store without it (purge deletes rows in batches there)");
    }
    this.partitions = b.partitionWidth == null ? null
        : new RecordPartitions(this, b.table, b.partitionWidth, b.partitionsAhead, lockTimeoutSeconds);
    this.insertStatement = partitions == null ? sql.insert : partitions.sql().insert;
    this.insertAndCommitStatement = partitions == null ? sql.insertAndCommit : partitions.sql().insertAndCommit;
  }

  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  @Override
  public boolean transactional() {
    return true;
  }

  /** True while this thread has bound a connection whose auto-commit is off: store transactions join the caller's. */
  @Override
  public boolean joinsCallerTransaction() {
    Connection caller = bound.get();
    if (caller == null) {
      return false;
    }
    try {
      return !caller.getAutoCommit();
    } catch (SQLException e) {
      throw wrap("reading the bound connection's auto-commit mode", e);
    }
  }

  /**
   * Makes this store run on the caller's connection, on this thread, until the returned binding is closed. If the
   * connection is in auto-commit mode, each store transaction begins and commits on it; if the caller's own
   * transaction is open, store transactions join it under a savepoint and the caller commits; phased and leased
   * executions then refuse to start (see {@link #joinsCallerTransaction()}), as they need commits of their own.
   */
  public Binding useConnection(Connection connection) {
    Objects.requireNonNull(connection, "connection");
    if (bound.get() != null) {
      throw new IllegalStateException("store '" + name + "' already has a connection bound on this thread");
    }
    bound.set(connection);
    return new Binding(null);
  }

  /**
   * Makes this store run on connections of its own, on this thread, until the returned binding is closed, which binds
   * the connection of {@link #useConnection} again: for a write that must commit apart from the caller's transaction,
   * which may still roll back (a nested idempotent call's kept failure). Without a bound connection it changes
   * nothing. The write takes a second connection from the pool while the caller's is held.
   */
  public Binding suspendConnection() {
    Connection caller = bound.get();
    bound.remove();
    return new Binding(caller);
  }

  /**
   * The connection this thread bound with {@link #useConnection}, if any: a framework that binds one checks it
   * first, to join the transaction of an outer binding on the same connection instead of binding again.
   */
  public Optional<Connection> boundConnection() {
    return Optional.ofNullable(bound.get());
  }

  /** Undoes {@link #useConnection} or {@link #suspendConnection}. */
  public final class Binding implements AutoCloseable {
    /** The connection bound again on close: the one suspended, or none. */
    private final Connection restored;

    private Binding(Connection restored) {
      this.restored = restored;
    }

    @Override
    public void close() {
      if (restored == null) {
        bound.remove();
      } else {
        bound.set(restored);
      }
    }
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    Connection caller = bound.get();
    if (caller != null) {
      return caller.getAutoCommit() ? JdbcTransaction.runOwned(caller, name, dialect, work) : runJoined(caller, work);
    }
    return JdbcTransaction.runInNew(dataSource, name, dialect, work);
  }

  private <R> R runJoined(Connection c, TransactionWork<R> work) throws Exception {
    Savepoint savepoint;
    try {
      savepoint = c.setSavepoint();
    } catch (SQLException e) {
      throw wrap("setting a savepoint in the caller's transaction", e);
    }
    JdbcTransaction tx = JdbcTransaction.joined(c, name, dialect);
    try {
      R result = work.execute(tx);
      if (tx.isRollbackOnly()) {
        rollbackToSavepoint(c, savepoint, null);
      } else {
        try {
          c.releaseSavepoint(savepoint);
        } catch (SQLException e) {
          throw wrap("releasing the savepoint", e);
        }
      }
      return result;
    } catch (StoreException e) {
      rollbackToSavepoint(c, savepoint, e);
      if (e.isTransient()) {
        // A deadlock or serialization failure may have rolled back the caller's whole transaction (InnoDB, H2):
        // retrying here would commit without the caller's earlier writes. Only the caller can retry.
        throw new StoreException(name, "a transient failure inside the caller's transaction; not retried here,"
            + " roll back and retry the whole transaction: " + e.getMessage(), e.sqlState(), e.isLockTimeout(),
            false, e);
      }
      throw e;
    } catch (Throwable t) {
      rollbackToSavepoint(c, savepoint, t);
      throw t;
    }
  }

  private void rollbackToSavepoint(Connection c, Savepoint savepoint, Throwable cause) {
    try {
      c.rollback(savepoint);
    } catch (SQLException e) {
      StoreException gone = new StoreException(name, "the caller's transaction was rolled back by the database"
          + " (rollback to the savepoint failed: " + e.getMessage() + "); roll back and retry the whole transaction",
          e.getSQLState(), false, false, cause);
      gone.addSuppressed(e);
      throw gone;
    }
  }

  private Connection connection(StoreTransaction tx) {
    return JdbcTransaction.driverConnectionOf(tx);
  }

  @Override
  public Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key) {
    Connection c = tx instanceof JdbcTransaction jdbc ? jdbc.connectionForRead() : connection(tx);
    try {
      return find(c, key);
    } catch (SQLException e) {
      throw wrap("find " + key, e);
    }
  }

  @Override
  public Optional<IdempotencyRecord> find(RecordKey key) {
    return committing("find " + key, c -> find(c, key));
  }

  /** The record of {@code key} on {@code c}: the columns after the key only, the caller's key standing for them. */
  private Optional<IdempotencyRecord> find(Connection c, RecordKey key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.find)) {
      bindKey(ps, 1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs, key, 0)) : Optional.empty();
      }
    }
  }

  @Override
  public boolean insert(StoreTransaction tx, IdempotencyRecord r) {
    return insert(tx, r, insertStatement);
  }

  /**
   * On PostgreSQL, when the store owns the transaction (and it is not marked rollback-only), the insert and the COMMIT
   * go to the server as one multi-statement execution: one round trip instead of two. If the insert fails, the server
   * skips the COMMIT (it discards the rest of the pipeline up to the sync), and the transaction rolls back as usual.
   */
  @Override
  public boolean insertLast(StoreTransaction tx, IdempotencyRecord r) {
    JdbcTransaction committable = committableWithLastWrite(tx);
    if (committable == null) {
      return insert(tx, r, insertStatement);
    }
    boolean inserted = insert(tx, r, insertAndCommitStatement);
    if (inserted) {
      committable.markCommitted();
    }
    return inserted;
  }

  /**
   * The transaction, when the record's last write may carry its COMMIT: PostgreSQL, the option on, a transaction this
   * store owns and that is not marked rollback-only (the mark must still roll it back). Null otherwise.
   */
  private JdbcTransaction committableWithLastWrite(StoreTransaction tx) {
    return commitWithLastRecordWrite ? JdbcTransaction.committableWithLastWrite(tx) : null;
  }

  /**
   * Partitioned expiry adds, around the 21 values: the advisory lock's key first, and after them the key and the
   * record's gone_at (see {@link RecordPartitions}).
   */
  private boolean insert(StoreTransaction tx, IdempotencyRecord r, String statement) {
    long goneAt = partitions == null ? 0 : RecordPartitions.goneAt(r);
    if (partitions != null) {
      partitions.ensure(goneAt);
    }
    try (PreparedStatement ps = connection(tx).prepareStatement(statement)) {
      ps.setQueryTimeout(lockTimeoutSeconds);
      int at = 0;
      if (partitions != null) {
        ps.setString(1, partitions.lockKey(r.key()));
        at = 1;
      }
      bindKey(ps, at + 1, r.key());
      ps.setString(at + 4, stateName(r.state()));
      ps.setString(at + 5, r.fingerprint().hash());
      ps.setString(at + 6, RecordCodec.encodeMap(r.fingerprint().fieldHashes()));
      bindResponse(ps, at + 7, r.response());
      ps.setString(at + 10, r.recoveryPoint());
      ps.setString(at + 11, RecordCodec.encodeMap(r.checkpoint().values()));
      ps.setString(at + 12, r.leaseOwner());
      setMillis(ps, at + 13, r.lockedUntil());
      ps.setLong(at + 14, r.version());
      ps.setLong(at + 15, r.createdAt().toEpochMilli());
      ps.setLong(at + 16, r.updatedAt().toEpochMilli());
      ps.setLong(at + 17, r.expiresAt().toEpochMilli());
      ps.setString(at + 18, r.keyNonce());
      setMillis(ps, at + 19, r.retainUntil());
      ps.setInt(at + 20, r.resumeAttempts());
      ps.setLong(at + 21, r.expiresAt().toEpochMilli());
      if (partitions != null) {
        bindKey(ps, at + 22, r.key());
        ps.setLong(at + 25, goneAt);
      }
      ps.execute();
      return true;
    } catch (SQLException e) {
      if (SqlErrors.isUniqueViolation(dialect, e) && (statement != insertAndCommitStatement || onRecordKey(e))) {
        return false;
      }
      if (partitions != null && "23514".equals(e.getSQLState())) {
        // no partition for the row: another node dropped it after the check; the executor retries transient ones
        partitions.forget(goneAt);
        throw new StoreException(name, "insert " + r.key() + " failed: its partition was dropped meanwhile, retry: "
            + e.getMessage(), e.getSQLState(), false, true, e);
      }
      throw wrap("insert " + r.key(), e);
    }
  }

  /**
   * Whether a unique violation is on the record table. With the COMMIT in the same execution, a violation may also
   * come from a deferred constraint of the caller's own tables, which is the caller's error. pgjdbc reports the
   * table in its server error message; read reflectively so that the driver stays the application's choice.
   */
  private boolean onRecordKey(SQLException e) {
    try {
      Object serverMessage = e.getClass().getMethod("getServerErrorMessage").invoke(e);
      Object table = serverMessage == null ? null
          : serverMessage.getClass().getMethod("getTable").invoke(serverMessage);
      return table == null || table.toString().equalsIgnoreCase(sql.simpleTable)
          || partitions != null && partitions.isPartition(table.toString());
    } catch (ReflectiveOperationException | RuntimeException notPgjdbc) {
      return true;
    }
  }

  @Override
  public boolean update(StoreTransaction tx, IdempotencyRecord next) {
    try {
      return update(connection(tx), next);
    } catch (SQLException e) {
      throw wrap("update " + next.key(), e);
    }
  }

  /**
   * On PostgreSQL, when the store owns the transaction (and it is not marked rollback-only), the update and the COMMIT
   * go to the server as one multi-statement execution, like {@link #insertLast}. An update that matches no row
   * (another writer moved the version on) makes the statement fail, so the server skips the COMMIT; the transaction
   * is then marked rollback-only and this returns {@code false}, as {@link #update} does.
   */
  @Override
  public boolean updateLast(StoreTransaction tx, IdempotencyRecord next) {
    JdbcTransaction committable = committableWithLastWrite(tx);
    if (committable == null) {
      return update(tx, next);
    }
    try (PreparedStatement ps = boundUpdate(connection(tx), sql.updateAndCommit, next)) {
      ps.execute();
      committable.markCommitted();
      return true;
    } catch (SQLException e) {
      if ("22P02".equals(e.getSQLState()) && String.valueOf(e.getMessage()).contains(Sql.FENCED)) {
        tx.setRollbackOnly();
        return false;
      }
      throw wrap("update and commit " + next.key(), e);
    }
  }

  private boolean update(Connection c, IdempotencyRecord next) throws SQLException {
    try (PreparedStatement ps = boundUpdate(c, sql.update, next)) {
      return ps.executeUpdate() == 1;
    }
  }

  /** {@code statement} ({@link Sql#update} or {@link Sql#updateAndCommit}) prepared on {@code c} with next's values. */
  private PreparedStatement boundUpdate(Connection c, String statement, IdempotencyRecord next) throws SQLException {
    PreparedStatement ps = c.prepareStatement(statement);
    try {
      ps.setQueryTimeout(lockTimeoutSeconds);
      ps.setString(1, stateName(next.state()));
      ps.setString(2, RecordCodec.encodeMap(next.fingerprint().fieldHashes()));
      bindResponse(ps, 3, next.response());
      ps.setString(6, next.recoveryPoint());
      ps.setString(7, RecordCodec.encodeMap(next.checkpoint().values()));
      ps.setString(8, next.leaseOwner());
      setMillis(ps, 9, next.lockedUntil());
      ps.setLong(10, next.version());
      ps.setLong(11, next.updatedAt().toEpochMilli());
      ps.setInt(12, next.resumeAttempts());
      bindKey(ps, 13, next.key());
      ps.setLong(16, next.version() - 1);
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  @Override
  public boolean delete(StoreTransaction tx, RecordKey key, long version) {
    return delete(tx, "delete ", sql.delete, key, version);
  }

  @Override
  public boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now) {
    return delete(tx, "delete expired ", sql.deleteIfExpired, key, now.toEpochMilli());
  }

  /** Deletes the record of {@code key} where the statement's conditions after the key hold for {@code value}. */
  private boolean delete(StoreTransaction tx, String what, String statement, RecordKey key, long value) {
    try (PreparedStatement ps = connection(tx).prepareStatement(statement)) {
      ps.setQueryTimeout(lockTimeoutSeconds);
      bindKey(ps, 1, key);
      for (int at = 4; at <= Sql.parameters(statement); at++) {
        ps.setLong(at, value);
      }
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw wrap(what + key, e);
    }
  }

  @Override
  public List<IdempotencyRecord> findLeaseExpired(Instant now, Collection<Operation> operations, int limit) {
    if (operations.isEmpty()) {
      return List.of();
    }
    List<Operation> ops = List.copyOf(operations);
    return query("find lease-expired records", sql.findLeaseExpired(ops.size()), ps -> {
      ps.setLong(1, now.toEpochMilli());
      for (int i = 0; i < ops.size(); i++) {
        ps.setString(2 + i, ops.get(i).name());
      }
      ps.setInt(2 + ops.size(), limit);
    });
  }

  @Override
  public List<IdempotencyRecord> findUncertain(Collection<Operation> operations, RecordKey after, int limit) {
    if (operations.isEmpty()) {
      return List.of();
    }
    List<Operation> ops = List.copyOf(operations);
    return query("find uncertain records", sql.findUncertain(ops.size(), after != null), ps -> {
      int at = 1;
      for (Operation op : ops) {
        ps.setString(at++, op.name());
      }
      if (after != null) {
        at = bindAfter(ps, at, after);
      }
      ps.setInt(at, limit);
    });
  }

  /** Binds the five parameters of {@code Sql.AFTER} from {@code at}; returns the next parameter's index. */
  private static int bindAfter(PreparedStatement ps, int at, RecordKey after) throws SQLException {
    ps.setString(at, after.scope().value());
    ps.setString(at + 1, after.scope().value());
    ps.setString(at + 2, after.operation().name());
    ps.setString(at + 3, after.operation().name());
    ps.setString(at + 4, after.key().value());
    return at + 5;
  }

  @Override
  public int purgeExpired(Instant now, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive, got " + limit);
    }
    if (partitions != null) {
      return partitions.purgeExpired(now, limit);
    }
    boolean mariaDb = dialect == JdbcDialect.MARIADB;
    long millis = now.toEpochMilli();
    return transaction("purge expired records", mariaDb, c -> {
      int purged = 0;
      for (Sql.PurgeStep step : sql.purgeSteps) {
        if (purged >= limit) {
          break;
        }
        purged += mariaDb ? purgeSkippingLocked(c, step, millis, limit - purged)
            : purgeOneStatement(c, step, millis, limit - purged);
      }
      return purged;
    });
  }

  private int purgeOneStatement(Connection c, Sql.PurgeStep step, long now, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(step.oneStatement())) {
      ps.setQueryTimeout(lockTimeoutSeconds);
      int last = Sql.parameters(step.oneStatement());
      bindNow(ps, 1, last - 1, now);
      ps.setInt(last, limit);
      return ps.executeUpdate();
    }
  }

  /**
   * MariaDB: lock a batch with SKIP LOCKED (rows a live transaction holds wait for the next round), then act on it
   * key by key.
   */
  private int purgeSkippingLocked(Connection c, Sql.PurgeStep step, long now, int limit) throws SQLException {
    int last = Sql.parameters(step.select());
    List<String[]> keys = query(c, step.select(), ps -> {
      ps.setQueryTimeout(lockTimeoutSeconds);
      bindNow(ps, 1, last - 1, now);
      ps.setInt(last, limit);
    }, rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
    if (keys.isEmpty()) {
      return 0;
    }
    int keyAt = Sql.parameters(step.byKey()) - 2;
    try (PreparedStatement ps = c.prepareStatement(step.byKey())) {
      for (String[] k : keys) {
        bindNow(ps, 1, keyAt - 1, now);
        ps.setString(keyAt, k[0]);
        ps.setString(keyAt + 1, k[1]);
        ps.setString(keyAt + 2, k[2]);
        ps.addBatch();
      }
      int purged = 0;
      for (int n : ps.executeBatch()) {
        // a driver that sends the batch in bulk (useBulkStmts) may report no count: the row is locked by this
        // transaction and the statement checked its condition again, so it found its row
        purged += n == Statement.SUCCESS_NO_INFO ? 1 : Math.max(n, 0);
      }
      return purged;
    }
  }

  /** Binds {@code now} (epoch ms) to the parameters {@code from} to {@code to}, both included. */
  private static void bindNow(PreparedStatement ps, int from, int to, long now) throws SQLException {
    for (int at = from; at <= to; at++) {
      ps.setLong(at, now);
    }
  }

  /**
   * Purges all records expired at {@code now} ({@link #purgeExpired}), batch after batch of {@code batchSize}, each
   * batch its own short transaction. Returns the total deleted or turned into tombstones.
   */
  public long purgeAllExpired(Instant now, int batchSize) {
    long total = 0;
    int deleted;
    do {
      deleted = purgeExpired(now, batchSize);
      total += deleted;
    } while (deleted == batchSize);
    return total;
  }

  @Override
  public IdempotencyAdmin admin() {
    return admin;
  }

  /**
   * The in-progress records at {@code now}: how many, how many of them have a lease that has run out, when the
   * oldest was claimed and when the first lease ends; and how many records are uncertain. Two parameterised queries
   * that read only in-progress rows through the lease index and uncertain rows through theirs, on a connection of its
   * own (never the caller's bound one), bounded by the lock timeout. Meant for gauges and operators: call it every
   * few seconds at most, not per request.
   *
   * @throws StoreException when the query fails; it names this store and keeps the SQLState
   */
  public InProgressRecords inProgress(Instant now) {
    Objects.requireNonNull(now, "now");
    return committing("count in-progress records", c -> {
      long uncertain = query(c, sql.uncertainCount, ps -> ps.setQueryTimeout(lockTimeoutSeconds),
          rs -> rs.getLong(1)).get(0);
      return query(c, sql.inProgress, ps -> {
        ps.setQueryTimeout(lockTimeoutSeconds);
        ps.setLong(1, now.toEpochMilli());
      }, rs -> rs.getLong(1) == 0 && uncertain == 0 ? InProgressRecords.NONE
          : new InProgressRecords(rs.getLong(1), rs.getLong(2), instantOrNull(rs, 3), instantOrNull(rs, 4),
              uncertain)).get(0);
    });
  }

  /**
   * Checks that the record table and its audit table ({@code <table>_audit}) exist with every column the store reads
   * and writes, so that a deployment without the schema fails when it starts rather than on every request.
   * {@link Builder#build()} calls it unless it creates the schema.
   *
   * @throws IllegalStateException when a table or a column is missing (or not readable by this user), naming the
   *     table and the schema file to run
   * @throws dev.idem.core.StoreException when the database cannot be reached
   */
  public void checkSchema() {
    String checked = "record table " + table;
    try (Connection c = dataSource.getConnection()) {
      try (PreparedStatement ps = c.prepareStatement(sql.probe); ResultSet rs = ps.executeQuery()) {
        rs.next();
      }
      checked = "audit table " + table + "_audit";
      try (PreparedStatement ps = c.prepareStatement(sql.auditProbe); ResultSet rs = ps.executeQuery()) {
        rs.next();
      }
      checked = "record table " + table;
      if (partitions != null) {
        partitions.checkSchema(c);
      }
    } catch (SQLException e) {
      StoreException failure = wrap("checking the " + checked, e);
      if (failure.isSchemaFault()) {
        throw new IllegalStateException("Idem store '" + name + "': the " + checked + " is missing,"
            + " or lacks a column, on " + dialect + " (" + e.getMessage().strip() + "). Create it from the schema file "
            + (partitions == null ? SchemaScript.RECORD : SchemaScript.RECORD_PARTITIONED).resource(dialect)
            + " on the classpath (with your migration tool), or let the store"
            + " create it (createSchemaIfMissing(true))", e);
      }
      throw failure;
    }
  }

  private List<IdempotencyRecord> query(String what, String statement, Binder binder) {
    return withConnection(what, c -> query(c, statement, binder, JdbcIdempotencyStore::read));
  }

  private static void bindKey(PreparedStatement ps, int at, RecordKey key) throws SQLException {
    ps.setString(at, key.scope().value());
    ps.setString(at + 1, key.operation().name());
    ps.setString(at + 2, key.key().value());
  }

  private static void bindResponse(PreparedStatement ps, int at, StoredResponse response) throws SQLException {
    if (response == null) {
      ps.setNull(at, Types.INTEGER);
      ps.setNull(at + 1, Types.VARCHAR);
      ps.setNull(at + 2, Types.VARBINARY);
    } else {
      ps.setInt(at, response.status());
      ps.setString(at + 1, RecordCodec.encodeHeaders(response.headers()));
      ps.setBytes(at + 2, response.body());
    }
  }

  private static void setMillis(PreparedStatement ps, int at, Instant instant) throws SQLException {
    if (instant == null) {
      ps.setNull(at, Types.BIGINT);
    } else {
      ps.setLong(at, instant.toEpochMilli());
    }
  }

  private static String stateName(RecordState state) {
    return state.name().toLowerCase(Locale.ROOT);
  }

  /** A record from a row of {@link Sql#COLUMNS}. */
  private static IdempotencyRecord read(ResultSet rs) throws SQLException {
    return read(rs, RecordKey.of(rs.getString(1), rs.getString(2), rs.getString(3)), 3);
  }

  /**
   * A record from the columns after the key ({@code Sql.VALUES}), the first at {@code 1 + at}: a find by key reads
   * only those, and the key it was given stands for the three it did not read back.
   */
  private static IdempotencyRecord read(ResultSet rs, RecordKey key, int at) throws SQLException {
    RecordState state = state(rs.getString(at + 1));
    Fingerprint fingerprint = new Fingerprint(rs.getString(at + 2).trim(),
        RecordCodec.decodeMap(rs.getString(at + 3)));
    int status = rs.getInt(at + 4);
    StoredResponse response = rs.wasNull() ? null
        : StoredResponse.of(status, RecordCodec.decodeHeaders(rs.getString(at + 5)), nonNull(rs.getBytes(at + 6)));
    String recoveryPoint = rs.getString(at + 7);
    Checkpoint checkpoint = Checkpoint.of(RecordCodec.decodeMap(rs.getString(at + 8)));
    String owner = rs.getString(at + 9);
    Instant until = instantOrNull(rs, at + 10);
    return new IdempotencyRecord(key, state, fingerprint, response, recoveryPoint, checkpoint, owner, until,
        rs.getLong(at + 11), Instant.ofEpochMilli(rs.getLong(at + 12)), Instant.ofEpochMilli(rs.getLong(at + 13)),
        Instant.ofEpochMilli(rs.getLong(at + 14)), rs.getString(at + 15), instantOrNull(rs, at + 16),
        rs.getInt(at + 17));
  }

  private static RecordState state(String stored) {
    return switch (stored) {
      case "completed" -> RecordState.COMPLETED;
      case "in_progress" -> RecordState.IN_PROGRESS;
      case "failed" -> RecordState.FAILED;
      default -> RecordState.valueOf(stored.toUpperCase(Locale.ROOT));
    };
  }

  private static byte[] nonNull(byte[] b) {
    return b == null ? new byte[0] : b;
  }

  /** The operator side: listing and eviction, each on a connection of its own. */
  private final class Admin implements IdempotencyAdmin {

    @Override
    public List<IdempotencyRecord> list(RecordState state, RecordKey after, int limit) {
      if (after == null) {
        return query("list " + state, sql.listFirst, ps -> {
          ps.setString(1, stateName(state));
          ps.setInt(2, limit);
        });
      }
      return query("list " + state, sql.listAfter, ps -> {
        ps.setString(1, stateName(state));
        ps.setInt(bindAfter(ps, 2, after), limit);
      });
    }

    @Override
    public boolean evict(RecordKey key) {
      return committing("evict " + key, c -> {
        try (PreparedStatement ps = c.prepareStatement(sql.evict)) {
          ps.setQueryTimeout(lockTimeoutSeconds);
          bindKey(ps, 1, key);
          return ps.executeUpdate() == 1;
        }
      });
    }

    /**
     * Reads the record, writes its next version conditional on the version given and the audit row, in one
     * transaction: the audit holds exactly the resolutions that took effect.
     */
    @Override
    public Optional<AuditEntry> resolve(RecordKey key, long version, Resolution resolution) {
      return transaction("resolve " + key, false, c -> {
        Optional<IdempotencyRecord> current = find(c, key);
        if (current.isEmpty() || current.get().version() != version
            || current.get().state() != RecordState.UNCERTAIN) {
          return Optional.<AuditEntry>empty();
        }
        IdempotencyRecord next = current.get().resolve(resolution);
        if (!update(c, next)) {
          return Optional.<AuditEntry>empty();
        }
        AuditEntry entry = AuditEntry.of(current.get(), next, resolution);
        try (PreparedStatement ps = c.prepareStatement(sql.auditInsert)) {
          ps.setQueryTimeout(lockTimeoutSeconds);
          bindKey(ps, 1, key);
          ps.setLong(4, entry.version());
          ps.setLong(5, entry.at().toEpochMilli());
          ps.setString(6, entry.actor());
          ps.setString(7, entry.action().name().toLowerCase(Locale.ROOT));
          ps.setString(8, stateName(entry.from()));
          ps.setString(9, stateName(entry.to()));
          ps.setString(10, entry.reason());
          ps.executeUpdate();
        }
        return Optional.of(entry);
      });
    }

    @Override
    public List<AuditEntry> history(RecordKey key) {
      return withConnection("audit of " + key, c -> query(c, sql.auditHistory, ps -> bindKey(ps, 1, key),
          rs -> new AuditEntry(key, rs.getLong(1), Instant.ofEpochMilli(rs.getLong(2)), rs.getString(3),
              Resolution.Action.valueOf(rs.getString(4).toUpperCase(Locale.ROOT)), state(rs.getString(5)),
              state(rs.getString(6)), rs.getString(7))));
    }

    @Override
    public String toString() {
      return "admin of " + JdbcIdempotencyStore.this;
    }
  }

  @Override
  public String toString() {
    return "JdbcIdempotencyStore[" + name + ", " + dialect + ", table " + table + "]";
  }

  /** Mutable, not thread-safe. {@link #build()} validates the settings and, by default, checks the database. */
  public static final class Builder {
    private final DataSource dataSource;
    private String name = "jdbc";
    private String table = "idem_record";
    private JdbcDialect dialect;
    private Duration lockTimeout = Duration.ofSeconds(5);
    private boolean createSchemaIfMissing;
    private boolean commitWithLastRecordWrite = true;
    private boolean checkSchema = true;
    private Duration partitionWidth;
    private Duration partitionsAhead = Duration.ofDays(32);
    private Clock clock = Clock.systemUTC();

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /** The table name (default {@code idem_record}); an SQL identifier, optionally schema-qualified. */
    public Builder table(String table) {
      this.table = Sql.checkTable(table);
      return this;
    }

    /** The dialect; detected from the database when not set. */
    public Builder dialect(JdbcDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /**
     * How long an insert waits behind a concurrent transaction holding the same key before the duplicate gets the
     * in-progress answer (default 5 s). Whole seconds, 1 to 300.
     */
    public Builder lockTimeout(Duration lockTimeout) {
      Objects.requireNonNull(lockTimeout, "lockTimeout");
      long s = lockTimeout.getSeconds();
      if (lockTimeout.getNano() != 0 || s < 1 || s > 300) {
        throw new IllegalArgumentException("lockTimeout must be whole seconds between 1 and 300, got " + lockTimeout);
      }
      this.lockTimeout = lockTimeout;
      return this;
    }

    /** Runs the dialect's schema file (CREATE ... IF NOT EXISTS) when the store is built. Off by default. */
    public Builder createSchemaIfMissing(boolean create) {
      this.createSchemaIfMissing = create;
      return this;
    }

    /**
     * PostgreSQL only: send the COMMIT of a transaction the store began in the same round trip as the record's last
     * write (its insert, or its conditional update), as one multi-statement execution (default on). Turn it off
     * behind a proxy that refuses multi-statement queries. Ignored on other databases.
     */
    public Builder commitWithLastRecordWrite(boolean combine) {
      this.commitWithLastRecordWrite = combine;
      return this;
    }

    /**
     * Whether {@link #build()} checks that the record table exists (default true; see
     * {@link JdbcIdempotencyStore#checkSchema()}). Turn it off only when the table is created after the store is built.
     */
    public Builder checkSchema(boolean check) {
      this.checkSchema = check;
      return this;
    }

    /**
     * PostgreSQL only: partitions the record table by the time each row is gone (its retention's end, or its expiry
     * without one), {@code width} per partition, so that purge drops whole partitions instead of deleting rows. The
     * table must be created from {@code db/idem/postgresql/partitioned/V1__idem_record_partitioned.sql}, then
     * {@code db/idem/postgresql/V5__idem_record_uncertain.sql} (or by {@link #createSchemaIfMissing}); docs/jdbc.md
     * gives the migration of an existing table. Whole minutes, 1 minute to 31 days; a day suits the default TTL and
     * retention. Off by default. {@link #build()} throws a {@link ConfigurationException} on another database.
     */
    public Builder partitionedExpiry(Duration width) {
      Objects.requireNonNull(width, "width");
      if (width.toSeconds() % 60 != 0 || width.getNano() != 0 || width.compareTo(Duration.ofMinutes(1)) < 0
          || width.compareTo(Duration.ofDays(31)) > 0) {
        throw new IllegalArgumentException("partition width must be whole minutes between 1 minute and 31 days, got "
            + width);
      }
      this.partitionWidth = width;
      return this;
    }

    /**
     * With {@link #partitionedExpiry}: how far ahead of now partitions are made, at build and by every purge (default
     * 32 days: the default TTL of 24 hours, the default retention of 30 days and a day to spare). Records that need a
     * partition further ahead get it when they are inserted. At most 400 partitions ahead: every partition costs each
     * key look-up one index probe.
     */
    public Builder partitionsAhead(Duration ahead) {
      Objects.requireNonNull(ahead, "ahead");
      if (ahead.isNegative() || ahead.compareTo(Duration.ofDays(400)) > 0) {
        throw new IllegalArgumentException("partitionsAhead must be between 0 and 400 days, got " + ahead);
      }
      this.partitionsAhead = ahead;
      return this;
    }

    /** The clock {@link #build()} reads to make partitions ahead (default the system clock, UTC). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public JdbcIdempotencyStore build() {
      if (partitionWidth != null
          && partitionsAhead.toMillis() / partitionWidth.toMillis() > RecordPartitions.MAX_PARTITIONS_AHEAD) {
        throw new IllegalArgumentException("partitionsAhead " + partitionsAhead + " at a partition width of "
            + partitionWidth + " makes more than " + RecordPartitions.MAX_PARTITIONS_AHEAD + " partitions; widen the"
            + " partitions");
      }
      if (partitionWidth != null && Sql.checkTable(table).substring(table.indexOf('.') + 1).length() > 48) {
        throw new IllegalArgumentException("with partitionedExpiry the table name has at most 48 characters (its"
            + " partitions add 14), got '" + table + "'");
      }
      JdbcIdempotencyStore store = new JdbcIdempotencyStore(this);
      if (createSchemaIfMissing) {
        store.createSchemaIfMissing();
        if (store.partitions != null) {
          store.checkSchema();   // a table of that name may exist unpartitioned
        }
      } else if (checkSchema) {
        store.checkSchema();
      }
      if (store.partitions != null && (createSchemaIfMissing || checkSchema)) {
        store.partitions.ensureAhead(clock.instant());
      }
      return store;
    }
  }
}
