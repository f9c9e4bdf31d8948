package dev.idem.bench.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * Where a pass's WAL went, per relation: the records PostgreSQL wrote between two WAL positions, read back through
 * {@code pg_walinspect} (PostgreSQL 15's {@code pg_get_wal_records_info}) and grouped by the relation of each record's
 * first block (its heap, or one of its indexes) and the record type. Full-page images are counted apart: they are the
 * first change of a page after a checkpoint, so they depend on when the checkpoint fell, not only on the work.
 * Records without a block (commits) are grouped by resource manager; blocks of other databases are named by their
 * relfilenode.
 *
 * <p>Needs a superuser, or a role that may create the extension and read WAL ({@code pg_read_server_files}). Other
 * sessions' WAL between the two positions counts too: read the relations that belong to the measured work.
 */
public final class WalBreakdown {
  private static final String QUERY = "SELECT COALESCE(c.relname, CASE WHEN m IS NULL THEN w.resource_manager"
      + " ELSE 'relfilenode ' || m[2] END) AS relation, w.record_type, count(*), sum(w.record_length)::bigint,"
      + " sum(w.fpi_length)::bigint"
      + " FROM pg_get_wal_records_info('0/0'::pg_lsn + ?::numeric,"
      + " LEAST('0/0'::pg_lsn + ?::numeric, pg_current_wal_flush_lsn())) w"
      + " LEFT JOIN LATERAL regexp_match(w.block_ref, 'rel \\d+/(\\d+)/(\\d+)') m ON true"
      + " LEFT JOIN pg_class c ON c.relfilenode = m[2]::oid"
      + " AND m[1]::oid = (SELECT oid FROM pg_database WHERE datname = current_database())"
      + " GROUP BY 1, 2 ORDER BY 4 DESC";

  /** WAL of one relation and record type: records, bytes (full-page images included), and full-page image bytes. */
  public record Row(String relation, String recordType, long records, long bytes, long fpiBytes) {}

  private WalBreakdown() {}

  /** Creates {@code pg_walinspect} when it is missing; false, with the reason printed, when that is not allowed. */
  public static boolean enable(DataSource ds) {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
      return true;
    } catch (SQLException e) {
      System.out.println("# no WAL breakdown: pg_walinspect is not available (" + e.getMessage().trim() + ")");
      return false;
    }
  }

  /**
   * The WAL between two positions, in bytes from the start of the WAL (as {@link PgCounters.Mark} holds them); none
   * when nothing was written between them (a read-only pass).
   */
  public static List<Row> between(DataSource ds, long fromBytes, long toBytes) throws SQLException {
    List<Row> rows = new ArrayList<>();
    if (toBytes <= fromBytes) {
      return rows;
    }
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(QUERY)) {
      ps.setLong(1, fromBytes);
      ps.setLong(2, toBytes);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new Row(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
        }
      }
    }
    return rows;
  }

  /** Prints the rows as a Markdown table, per operation of a pass of {@code ops} operations. */
  public static void print(String title, List<Row> rows, long ops) {
    System.out.println();
    if (rows.isEmpty()) {
      System.out.println("No WAL, " + title + ".");
      return;
    }
    System.out.println("WAL per operation, " + title + " (" + ops + " operations):");
    System.out.println("| relation | record type | records/op | B/op | of which full-page images B/op |");
    System.out.println("| --- | --- | ---: | ---: | ---: |");
    long bytes = 0;
    long fpi = 0;
    for (Row r : rows) {
      bytes += r.bytes();
      fpi += r.fpiBytes();
      if ((double) r.bytes() / ops >= 1) {
        System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.0f | %.0f |%n", r.relation(), r.recordType(),
            (double) r.records() / ops, (double) r.bytes() / ops, (double) r.fpiBytes() / ops);
      }
    }
    System.out.printf(Locale.ROOT, "| all | | | %.0f | %.0f |%n", (double) bytes / ops, (double) fpi / ops);
  }
}
