package dev.idem.bench.outbox;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.bench.outbox.BenchSupport.Cpu;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The PostgreSQL side of the consumer benchmarks: a pool of two connections, an inbox table and an effect table under
 * names of their own (and the pool's backends an application name of their own), both holding {@code prefill} rows
 * from the start (analysed), and the effect every variant applies: one {@code INSERT} of the message's id. Closing
 * drops the tables and closes the pool.
 */
public final class InboxTables implements AutoCloseable {
  final HikariDataSource pool;
  final String inboxTable;
  final String effects;
  final Inbox inbox;
  private final String insert;
  private final String application;
  /** Times every JDBC call of the inbox and of {@link #commitEffect}, with {@code --profile true}; else null. */
  final JdbcProfile profile;
  private final DataSource source;
  private final int prefill;

  private InboxTables(HikariDataSource pool, String prefix, String application, boolean profiled, int prefill) {
    this.prefill = prefill;
    this.pool = pool;
    this.application = application;
    this.inboxTable = BenchSupport.uniqueTable(prefix + "_in");
    this.effects = BenchSupport.uniqueTable(prefix + "_fx");
    this.insert = "INSERT INTO " + effects + " (event_id, amount) VALUES (?, 1)";
    this.profile = profiled ? new JdbcProfile(inboxTable) : null;
    this.source = profiled ? profile.wrap(pool) : pool;
    this.inbox = Inbox.builder(JdbcInboxStore.builder(source).dialect(JdbcDialect.POSTGRESQL).table(inboxTable)
        .build()).build();
  }

  /**
   * Creates both tables, named {@code <prefix>_in_<hex>} and {@code <prefix>_fx_<hex>}, and fills them with
   * {@code prefill} rows each ({@code source} names the inbox rows' source). With {@code --profile true} in
   * {@code flags}, the inbox and the hand-written transactions run through a {@link JdbcProfile}. With
   * {@code --synchronous-commit off} the pool's commits do not wait for the WAL flush: a lens that takes the disk out
   * of the comparison, never a setting for a consumer that acknowledges after its commit (a crash could lose a
   * committed effect of a message already acknowledged).
   */
  public static InboxTables create(Map<String, String> flags, String prefix, int prefill, String source)
      throws SQLException {
    String application = BenchSupport.uniqueTable("idem-bench-" + prefix);
    String synchronousCommit = flags.getOrDefault("synchronous-commit", "on");
    if (!synchronousCommit.equals("on") && !synchronousCommit.equals("off")) {
      throw new IllegalArgumentException("--synchronous-commit must be on or off, got " + synchronousCommit);
    }
    HikariDataSource pool = BenchSupport.pool(BenchSupport.postgresUrl(flags), BenchSupport.postgresUser(flags), 2,
        prefix + "-bench", Map.of("reWriteBatchedInserts", "true", "ApplicationName", application, "options",
            "-c synchronous_commit=" + synchronousCommit));
    boolean profiled = Boolean.parseBoolean(flags.getOrDefault("profile", "false"));
    InboxTables tables = new InboxTables(pool, prefix, application, profiled, prefill);
    try {
      ((JdbcInboxStore) tables.inbox.store()).createSchemaIfMissing();
      try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE " + tables.effects + " (id BIGSERIAL PRIMARY KEY, event_id VARCHAR(64) NOT NULL,"
            + " amount INTEGER NOT NULL)");
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + tables.inboxTable + " (consumer, event_id,"
            + " source, payload_hash, received_at, processed_at) SELECT 'prefill', md5(g::text), ?, repeat('0', 64),"
            + " 0, 0 FROM generate_series(1, ?) g")) {
          ps.setString(1, source);
          ps.setInt(2, prefill);
          ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + tables.effects + " (event_id, amount)"
            + " SELECT md5(g::text), 1 FROM generate_series(1, ?) g")) {
          ps.setInt(1, prefill);
          ps.executeUpdate();
        }
        st.execute("VACUUM ANALYZE " + tables.inboxTable);
        st.execute("VACUUM ANALYZE " + tables.effects);
      }
      return tables;
    } catch (SQLException | RuntimeException e) {
      tables.close();
      throw e;
    }
  }

  /** The effect of one message: one {@code INSERT} of its id, prepared and executed on {@code c}. */
  void applyEffect(Connection c, String eventId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(insert)) {
      ps.setString(1, eventId);
      ps.executeUpdate();
    }
  }

  /** An Idem consumer's handler that applies {@link #applyEffect the effect} of each event in its transaction. */
  InboxHandler effectHandler() {
    return (tx, event) -> {
      applyEffect(JdbcTransaction.connectionOf(tx), event.eventId());
      return null;
    };
  }

  /**
   * A hand-written consumer's transaction of one message: a pooled connection, {@code BEGIN}, the
   * {@link #applyEffect effect}, {@code COMMIT}.
   */
  void commitEffect(String eventId) throws SQLException {
    try (Connection c = source.getConnection()) {
      c.setAutoCommit(false);
      try {
        applyEffect(c, eventId);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /** The SQL of {@link #applyEffect}, for effects sent as one JDBC batch. */
  public String effectInsert() {
    return insert;
  }

  /**
   * The data source of the inbox and of {@link #commitEffect}: the pool, or with {@code --profile true} the pool
   * through {@link #profile}.
   */
  public DataSource dataSource() {
    return source;
  }

  /** The inbox table's name. */
  public String inboxTable() {
    return inboxTable;
  }

  /**
   * Deletes the rows that runs added to both tables, keeping the {@code prefill} rows, and vacuums both: the next run
   * starts from the tables as {@link #create} made them.
   */
  public void removeRunRows() throws SQLException {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("DELETE FROM " + inboxTable + " WHERE consumer <> 'prefill'");
      st.execute("DELETE FROM " + effects + " WHERE id > " + prefill);
      st.execute("VACUUM ANALYZE " + inboxTable);
      st.execute("VACUUM ANALYZE " + effects);
    }
  }

  /** Refreshes the statistics after a run added rows, as autovacuum would. */
  void analyze() throws SQLException {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("ANALYZE " + inboxTable);
    }
  }

  /**
   * CPU ticks so far ({@code /proc}) of the PostgreSQL backends serving this pool (found by its application name),
   * so that other clients of a shared server are not counted. The server's own processes (WAL writer, checkpointer)
   * are left out.
   */
  long backendTicks() throws SQLException {
    long ticks = 0;
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?")) {
      ps.setString(1, application);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ticks += Cpu.processTicks(rs.getLong(1));
        }
      }
    }
    return ticks;
  }

  /** The rows of the effect table. */
  public long effectRows() throws SQLException {
    try (Connection c = pool.getConnection()) {
      return Long.parseLong(BenchSupport.scalar(c, "SELECT count(*) FROM " + effects));
    }
  }

  /** The rows of the inbox table. */
  public long inboxRows() throws SQLException {
    try (Connection c = pool.getConnection()) {
      return Long.parseLong(BenchSupport.scalar(c, "SELECT count(*) FROM " + inboxTable));
    }
  }

  /** Drops both tables and closes the pool. */
  @Override
  public void close() {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + inboxTable);
      st.execute("DROP TABLE IF EXISTS " + effects);
    } catch (SQLException | RuntimeException e) {
      System.err.println("could not drop " + inboxTable + " and " + effects + ": " + e.getMessage());
    } finally {
      pool.close();
    }
  }
}
