package dev.idem.jdbc;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.StoreException;
import dev.idem.jdbc.internal.PartitionedSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The partitions of a record table partitioned by {@code gone_at} (PostgreSQL), for
 * {@link JdbcIdempotencyStore.Builder#partitionedExpiry}: makes them ahead and on demand, drops those whose rows are
 * all gone, and runs the two row steps purge keeps. Thread-safe.
 *
 * <p>Implementation notes. A row's {@code gone_at} is {@code COALESCE(retain_until, expires_at)}, fixed at insert (no
 * claim ever moves a row between partitions): after it, the row is gone by its own rules ({@link
 * IdempotencyRecord#isGone}) unless it is in progress with a recovery point or under a lease that has not ended yet (a
 * takeover shortly before the TTL), or in a state that waits for a decision (uncertain). A partition whose upper bound
 * has passed therefore holds only gone rows and such live ones, and the rare row inserted with an earlier gone_at than
 * its own: the insert takes the gone_at of a row its key already has (so that a duplicate fails on that partition's
 * primary key), and when that row was being deleted by a transaction that takes no advisory lock (purge, evict), the
 * insert waits for the deletion and then succeeds there. The drop runs in one transaction that locks the parent table
 * (ACCESS EXCLUSIVE, waiting at most {@link #DROP_LOCK_WAIT}), moves the live rows and the rows not gone by their own
 * times to a newer partition (no other transaction can touch them meanwhile, so the move raises no serialization
 * failure), and drops the partitions: claims wait for that transaction, a few milliseconds, and none fails. When the
 * lock is not granted in time (a long transaction on the table), the drop waits for the next purge.
 *
 * <p>Partitions are made with CREATE TABLE and ATTACH PARTITION, which takes only a SHARE UPDATE EXCLUSIVE lock on
 * the parent, so a claim that finds its partition missing can make it on another connection while its own
 * transaction holds the table: the insert never fails for lack of a partition (a partition another node dropped
 * between the check and the insert gives a transient failure, which the executor retries).
 */
final class RecordPartitions {
  /** How long a drop waits for its lock on the table before it gives up until the next purge. */
  static final Duration DROP_LOCK_WAIT = Duration.ofMillis(500);
  /** At most this many partitions ahead, so that a claim's key look-up (one probe per partition) stays cheap. */
  static final int MAX_PARTITIONS_AHEAD = 400;

  private static final Pattern BOUNDS = Pattern.compile("FROM \\('?(-?\\d+)'?\\) TO \\('?(-?\\d+)'?\\)");
  private static final DateTimeFormatter NAME = DateTimeFormatter.ofPattern("yyyyMMddHHmm").withZone(ZoneOffset.UTC);

  private final JdbcIdempotencyStore store;
  private final PartitionedSql sql;
  private final long width;
  private final long ahead;
  private final int lockTimeoutSeconds;
  /** Known partitions: lower bound to upper bound; refreshed from the catalog when a bound is not covered. */
  private final ConcurrentSkipListMap<Long, Long> known = new ConcurrentSkipListMap<>();
  private final Map<Long, String> names = new ConcurrentSkipListMap<>();

  RecordPartitions(JdbcIdempotencyStore store, String table, Duration width, Duration ahead, int lockTimeoutSeconds) {
    this.store = store;
    this.lockTimeoutSeconds = lockTimeoutSeconds;
    this.sql = new PartitionedSql(table);
    this.width = width.toMillis();
    this.ahead = ahead.toMillis();
  }

  PartitionedSql sql() {
    return sql;
  }

  /** The time after which {@code r} is gone unless live: its retention's end, or its expiry without one. */
  static long goneAt(IdempotencyRecord r) {
    return (r.retainUntil() == null ? r.expiresAt() : r.retainUntil()).toEpochMilli();
  }

  /** The advisory lock's key text for a record key: the same on every node, distinct per table and key. */
  String lockKey(RecordKey key) {
    return sql.table + '\n' + key.scope().value() + '\n' + key.operation().name() + '\n' + key.key().value();
  }

  /**
   * Whether a table name (unqualified, as PostgreSQL reports it) is one of this table's partitions: named as the store
   * names them, or listed in the catalog when last read (partitions made under another name, before a rename).
   */
  boolean isPartition(String name) {
    return name.regionMatches(true, 0, sql.partitionPrefix, 0, sql.partitionPrefix.length())
        || names.containsValue(name);
  }

  /** Makes sure the partition for {@code goneAt} exists, creating it (on another connection) if it does not. */
  void ensure(long goneAt) {
    if (!covered(goneAt)) {
      create(List.of(lowerBound(goneAt)));
    }
  }

  /** Forgets the partition for {@code goneAt}, as another node dropped it, so that the next claim makes it again. */
  void forget(long goneAt) {
    Map.Entry<Long, Long> p = known.floorEntry(goneAt);
    if (p != null) {
      known.remove(p.getKey());
    }
  }

  /** Makes every partition from {@code now} to {@code now} plus the configured time ahead. */
  void ensureAhead(Instant now) {
    List<Long> missing = new ArrayList<>();
    long until = now.toEpochMilli() + ahead;
    for (long from = lowerBound(now.toEpochMilli()); from <= until; from += width) {
      if (!covered(from)) {
        missing.add(from);
      }
    }
    if (!missing.isEmpty()) {
      create(missing);
    }
  }

  private boolean covered(long at) {
    Map.Entry<Long, Long> p = known.floorEntry(at);
    return p != null && at < p.getValue();
  }

  private long lowerBound(long at) {
    return Math.floorDiv(at, width) * width;
  }

  private synchronized void create(List<Long> lowerBounds) {
    refresh();
    List<String> statements = new ArrayList<>();
    for (long from : lowerBounds) {
      if (!covered(from)) {
        String name = sql.partitionPrefix + NAME.format(Instant.ofEpochMilli(from));
        statements.add(sql.createPartition(name));
        statements.add(sql.attachPartition(name, from, from + width));
      }
    }
    if (!statements.isEmpty()) {
      store.withConnection("create partitions of " + sql.table, c -> {
        SchemaLock.run(c, JdbcDialect.POSTGRESQL, statements);
        return null;
      });
      refresh();
    }
  }

  /** Reads the partitions from the catalog. */
  private void refresh() {
    List<long[]> bounds = new ArrayList<>();
    List<String> found = new ArrayList<>();
    store.withConnection("list partitions of " + sql.table, c -> {
      try (PreparedStatement ps = c.prepareStatement(sql.partitions)) {
        ps.setString(1, sql.table);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Matcher m = BOUNDS.matcher(rs.getString(2));
            if (m.find()) {
              bounds.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
              found.add(rs.getString(1));
            }
          }
        }
      }
      return null;
    });
    known.clear();
    names.clear();
    for (int i = 0; i < bounds.size(); i++) {
      known.put(bounds.get(i)[0], bounds.get(i)[1]);
      names.put(bounds.get(i)[0], found.get(i));
    }
  }

  /**
   * Purge in partitioned mode: makes the partitions ahead, drops every partition whose upper bound is at or before
   * {@code now} (after moving its live rows), then deletes up to {@code limit} expired claims without a recovery point
   * whose lease has ended and turns expired final records into tombstones, row by row. Returns the rows deleted or
   * shrunk row by row; the rows of dropped partitions are not counted (counting them would read them all).
   */
  int purgeExpired(Instant now, int limit) {
    ensureAhead(now);
    dropExpired(now);
    long millis = now.toEpochMilli();
    return store.transaction("purge expired records", false, c -> {
      int purged;
      try (PreparedStatement ps = c.prepareStatement(sql.deleteExpiredClaims)) {
        ps.setQueryTimeout(lockTimeoutSeconds);
        ps.setLong(1, millis);
        ps.setLong(2, millis);
        ps.setInt(3, limit);
        purged = ps.executeUpdate();
      }
      if (purged < limit) {
        try (PreparedStatement ps = c.prepareStatement(sql.shrink)) {
          ps.setQueryTimeout(lockTimeoutSeconds);
          ps.setLong(1, millis);
          ps.setLong(2, millis);
          ps.setLong(3, millis);
          ps.setInt(4, limit - purged);
          purged += ps.executeUpdate();
        }
      }
      return purged;
    });
  }

  /**
   * Drops every partition whose upper bound is at or before {@code now}, in one transaction that first moves their
   * live rows to the partition one width ahead. Returns how many partitions it dropped: none when the table's lock
   * was not granted within {@link #DROP_LOCK_WAIT}.
   */
  int dropExpired(Instant now) {
    refresh();
    long millis = now.toEpochMilli();
    List<String> due = new ArrayList<>();
    long below = Long.MIN_VALUE;
    for (Map.Entry<Long, Long> p : known.entrySet()) {
      if (p.getValue() <= millis) {
        due.add(names.get(p.getKey()));
        below = Math.max(below, p.getValue());
      }
    }
    if (due.isEmpty()) {
      return 0;
    }
    long target = millis + width;
    ensure(target);
    long cutoff = below;
    try {
      store.transaction("drop expired partitions of " + sql.table, false, c -> {
        try (Statement st = c.createStatement()) {
          st.execute(sql.lockTimeout(DROP_LOCK_WAIT.toMillis()));
          st.execute(sql.lockTable());
        }
        try (PreparedStatement ps = c.prepareStatement(sql.moveLive)) {
          ps.setLong(1, target);
          ps.setLong(2, cutoff);
          ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement(sql.moveLeased)) {
          ps.setLong(1, target);
          ps.setLong(2, cutoff);
          ps.setLong(3, millis);
          ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement(sql.moveMisplaced)) {
          ps.setLong(1, target);
          ps.setLong(2, cutoff);
          ps.setLong(3, millis);
          ps.executeUpdate();
        }
        try (Statement st = c.createStatement()) {
          for (String partition : due) {
            st.execute(sql.dropPartition(partition));
          }
        }
        return null;
      });
    } catch (StoreException e) {
      if (e.isLockTimeout()) {
        return 0;
      }
      throw e;
    } finally {
      refresh();
    }
    return due.size();
  }

  /**
   * Checks that the table exists with every column (gone_at included) and is partitioned.
   *
   * @throws IllegalStateException otherwise, naming the table and the schema file
   */
  void checkSchema(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.isPartitioned)) {
      ps.setString(1, sql.table);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("Idem store '" + store.name() + "': the record table " + sql.table
              + " is not partitioned, but the store is built with partitionedExpiry. Create it from "
              + "db/idem/postgresql/partitioned/V1__idem_record_partitioned.sql (see docs/jdbc.md for the migration"
              + " of an existing table), or build the store without partitionedExpiry");
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement(sql.probe); ResultSet rs = ps.executeQuery()) {
      rs.next();
    }
  }
}
