package dev.idem.bench.db;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * What a pass costs PostgreSQL beyond CPU: the WAL it wrote ({@code pg_current_wal_lsn()}, differences through
 * {@code pg_wal_lsn_diff}) and the transactions committed in the current database ({@code xact_commit} of
 * {@code pg_stat_database}). Mark before a pass, then ask what changed since.
 *
 * <p>PostgreSQL 15+ keeps a backend's statistics in the backend and flushes them at most once a second (or after ten
 * idle seconds), so a read right after a pass would miss up to a second of commits. Each mark therefore first holds
 * every connection of the pool at once and runs {@code pg_stat_force_next_flush()} on each, which makes that backend
 * flush as it goes idle after the statement; the read then clears the reading backend's statistics snapshot. The
 * pool must not hold more than {@code poolSize} connections, and no pass may run during a mark.
 *
 * <p>Both figures are the server's: other sessions on the same database count in {@code xact_commit}, and every
 * session of the cluster in the WAL; a read-only transaction, an auto-commit SELECT included, counts as a commit.
 * The mark's own statements add {@code poolSize + 1} commits, negligible against a pass.
 *
 * <pre>PgCounters pg = new PgCounters(dataSource, 8);
 * PgCounters.Mark before = pg.mark();
 * ... the pass: n operations ...
 * PgCounters.Usage used = pg.since(before);
 * used.commitsPer(n); used.walBytesPer(n);</pre>
 */
public final class PgCounters {
  private final DataSource dataSource;
  private final int poolSize;

  /** Counters read through {@code dataSource}, a pool of at most {@code poolSize} connections. */
  public PgCounters(DataSource dataSource, int poolSize) {
    if (poolSize < 1) {
      throw new IllegalArgumentException("poolSize must be at least 1, got " + poolSize);
    }
    this.dataSource = dataSource;
    this.poolSize = poolSize;
  }

  /**
   * The WAL position, in bytes from its start, and the database's committed transactions, at one moment; and the
   * process ids of the pool's backends then (to read their CPU time: {@code /proc/<pid>/stat} on the same host).
   */
  public record Mark(long walBytes, long commits, List<Long> backends) {}

  /** What changed between two marks. */
  public record Usage(long walBytes, long commits) {
    /** WAL bytes per operation, for a pass of {@code ops} operations. */
    public double walBytesPer(long ops) {
      return ops == 0 ? Double.NaN : (double) walBytes / ops;
    }

    /** Committed transactions per operation, for a pass of {@code ops} operations. */
    public double commitsPer(long ops) {
      return ops == 0 ? Double.NaN : (double) commits / ops;
    }
  }

  /** Flushes every pooled backend's statistics, then reads the WAL position and the commit count. */
  public Mark mark() {
    List<Connection> held = new ArrayList<>(poolSize);
    try {
      for (int i = 0; i < poolSize; i++) {
        held.add(dataSource.getConnection());
      }
      List<Long> backends = new ArrayList<>(poolSize);
      for (Connection c : held) {
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), pg_stat_force_next_flush()")) {
          rs.next();
          backends.add(rs.getLong(1));
        }
      }
      try (Statement st = held.get(0).createStatement()) {
        st.execute("SELECT pg_stat_clear_snapshot()");
        try (ResultSet rs = st.executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,"
            + " xact_commit FROM pg_stat_database WHERE datname = current_database()")) {
          if (!rs.next()) {
            throw new IllegalStateException("pg_stat_database has no row for the current database");
          }
          return new Mark(rs.getLong(1), rs.getLong(2), List.copyOf(backends));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read PostgreSQL's WAL position and commit count (PostgreSQL 15+"
          + " needed for pg_stat_force_next_flush): " + e.getMessage(), e);
    } finally {
      for (Connection c : held) {
        try {
          c.close();
        } catch (SQLException ignored) {
          // back to the pool or gone; nothing to count
        }
      }
    }
  }

  /** What changed since {@code before}: a new mark, less {@code before}. */
  public Usage since(Mark before) {
    return between(before, mark());
  }

  /** What changed from {@code before} to {@code after}. */
  public static Usage between(Mark before, Mark after) {
    return new Usage(after.walBytes() - before.walBytes(), after.commits() - before.commits());
  }
}
