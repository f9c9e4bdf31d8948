package dev.idem.client;

import dev.idem.client.spi.PendingJournal;
import dev.idem.core.crypto.Encryption;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A {@link PendingJournal} in a relational database table: PostgreSQL, MariaDB/MySQL or H2, through plain
 * {@code java.sql} (no driver or pool is a dependency of this module). Thread-safe; every operation takes its own
 * connection from the {@link DataSource}. Several instances, in one process or several, may share a table.
 *
 * <p>One row per pending intent, keyed by the intent's idempotency key (primary key): {@code idem_key},
 * {@code seq} (an identity column giving the creation order), {@code method}, {@code uri}, {@code headers} (text,
 * one {@code Name: value} line per header, in order), {@code body} (binary: {@code BYTEA} on PostgreSQL,
 * {@code LONGBLOB} on MariaDB, {@code BLOB} on H2) and {@code created_at} (epoch milliseconds, UTC). {@link #append}
 * inserts the row in one auto-committed statement, {@link #complete} deletes it, {@link #pending()} reads every row
 * ordered by creation. With {@link Builder#createSchemaIfMissing(boolean)} the table is created with
 * {@code CREATE TABLE IF NOT EXISTS} when the journal is built.
 *
 * <p>Secret headers ({@code Authorization}, {@code Cookie}, {@code Proxy-Authorization}, any case) are removed again
 * before a row is written, although the client already removes them. A record larger than
 * {@link Builder#maxRecordBytes(int)} (measured as {@link FileJournal} measures its records) is refused with a
 * {@link JournalException}, as {@link FileJournal} refuses it. Every SQL failure becomes a {@link JournalException}
 * naming the journal, its table, the statement and the SQLState.
 *
 * <p>With {@link Builder#encryption(Encryption)}, the {@code body} column holds the body sealed
 * ({@link Encryption#seal}, associated data binding the key, method and URI) and {@link #pending()} opens it. A body
 * that does not open (tampered with, moved to another row, or sealed under a key the key provider lacks) is a
 * {@link JournalException} naming the key and the reason ({@link dev.idem.core.crypto.DecryptionException} as its
 * cause): the intent is never resent with other bytes. Rows written before encryption was turned on are read as they
 * are; a sealed body read by a journal without encryption is refused the same way. The method, URI and headers stay in
 * clear text.
 *
 * <p>If the DataSource hands out connections with auto-commit off, the journal commits each statement itself, so an
 * intent is durable when {@link #append} returns either way.
 */
public final class JdbcJournal implements PendingJournal {
  /** Default table name. */
  public static final String DEFAULT_TABLE = "idem_client_intent";

  private static final Pattern TABLE = Pattern.compile(
      "[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");
  private static final Set<String> SECRET_HEADERS = Set.of("authorization", "cookie", "proxy-authorization");
  /**
   * The first line of the {@code headers} column when the body is plaintext that begins with the bytes of a sealed
   * envelope (a binary body may): without it the body would be read back as sealed, and the intent could not be
   * resumed. No header line begins with ':'.
   */
  private static final String PLAIN_BODY = ":idem-plain-body";

  /** The databases this journal supports; detected from {@code DatabaseMetaData.getDatabaseProductName()}. */
  public enum Dialect {
    /** PostgreSQL: {@code BYTEA} body, identity sequence. */
    POSTGRESQL,
    /** MariaDB (and MySQL where the syntax matches): {@code LONGBLOB} body, InnoDB. */
    MARIADB,
    /** H2 2.x: {@code BLOB} body. */
    H2;

    /**
     * The dialect for a JDBC product name.
     *
     * @throws IllegalArgumentException for a database this journal does not support
     */
    public static Dialect fromProductName(String productName) {
      String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
      if (p.contains("postgres")) {
        return POSTGRESQL;
      }
      if (p.contains("mariadb") || p.contains("mysql")) {
        return MARIADB;
      }
      if (p.equals("h2")) {
        return H2;
      }
      throw new IllegalArgumentException("database '" + productName + "' is not supported; JdbcJournal runs on"
          + " PostgreSQL, MariaDB/MySQL and H2");
    }
  }

  private final String name;
  private final DataSource dataSource;
  private final String table;
  private final Dialect dialect;
  private final int maxRecordBytes;
  private final Clock clock;
  private final Encryption encryption;
  private final String insertSql;
  private final String deleteSql;
  private final String selectAllSql;
  private final String selectOneSql;
  private volatile boolean closed;

  private JdbcJournal(Builder b, Dialect dialect) {
    this.name = b.name;
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.dialect = dialect;
    this.maxRecordBytes = b.maxRecordBytes;
    this.clock = b.clock;
    this.encryption = b.encryption;
    this.insertSql = "INSERT INTO " + table + " (idem_key, method, uri, headers, body, created_at)"
        + " VALUES (?, ?, ?, ?, ?, ?)";
    this.deleteSql = "DELETE FROM " + table + " WHERE idem_key = ?";
    this.selectAllSql = "SELECT idem_key, method, uri, headers, body FROM " + table + " ORDER BY seq";
    this.selectOneSql = "SELECT idem_key, method, uri, headers, body FROM " + table + " WHERE idem_key = ?";
  }

  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  public String name() {
    return name;
  }

  public String table() {
    return table;
  }

  public Dialect dialect() {
    return dialect;
  }

  public int maxRecordBytes() {
    return maxRecordBytes;
  }

  /**
   * Inserts {@code intent} as pending (secret headers removed), committed when this returns. Appending a key that is
   * pending with the same intent (method, URI, headers, body) is a no-op.
   *
   * @throws IllegalArgumentException when the intent has no key
   * @throws JournalException when the record is larger than {@link #maxRecordBytes()}, when the key is pending for a
   *     different intent, or when the database fails
   */
  @Override
  public void append(Intent intent) {
    Objects.requireNonNull(intent, "intent");
    ensureOpen();
    String key = intent.key().orElseThrow(() -> new IllegalArgumentException(
        "journal '" + name + "': an intent needs a key to be journaled, was " + intent));
    Intent clean = intent.withoutHeaders(SECRET_HEADERS);
    byte[] body = encryption == null ? clean.bodyUnsafe()
        : SealedBodies.seal(encryption, key, clean.method(), clean.uri().toString(), clean.bodyUnsafe());
    // a plaintext body that begins as an envelope does is marked so, or it would be read back as sealed
    String headers = (encryption == null && Encryption.isSealed(body) ? PLAIN_BODY + "\n" : "")
        + encodeHeaders(clean);
    checkSize(clean, key, body.length);
    for (int attempt = 0; ; attempt++) {
      SQLException failure;
      try {
        inAutoCommit("append of key " + key, insertSql, c -> {
          try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, key);
            ps.setString(2, clean.method());
            ps.setString(3, clean.uri().toString());
            ps.setString(4, headers);
            ps.setBytes(5, body);
            ps.setLong(6, clock.millis());
            ps.executeUpdate();
          }
          return null;
        });
        return;
      } catch (DuplicateCandidate d) {
        failure = d.cause;
      }
      Intent existing = find(key);
      if (existing != null) {
        if (existing.sameRequestAs(clean)) {
          return;
        }
        throw new JournalException("journal '" + name + "' (table " + table + "): key " + key + " is already pending"
            + " for a different intent (" + existing + "), not " + clean + ". An idempotency key names one intent;"
            + " use a new key for a different request, or complete the pending one first.");
      }
      if (attempt >= 1) {
        throw wrap("append of key " + key, insertSql, failure);
      }
      // the conflicting row was completed in between: insert again, once
    }
  }

  /** Deletes the row of {@code key}; unknown keys are ignored. */
  @Override
  public void complete(String key) {
    Objects.requireNonNull(key, "key");
    ensureOpen();
    try {
      inAutoCommit("completion of key " + key, deleteSql, c -> {
        try (PreparedStatement ps = c.prepareStatement(deleteSql)) {
          ps.setString(1, key);
          ps.executeUpdate();
        }
        return null;
      });
    } catch (DuplicateCandidate d) {
      throw wrap("completion of key " + key, deleteSql, d.cause);
    }
  }

  /** Every pending intent, oldest first. */
  @Override
  public List<Intent> pending() {
    ensureOpen();
    try {
      return inAutoCommit("reading the pending intents", selectAllSql, c -> {
        List<Intent> intents = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(selectAllSql); ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            intents.add(decode(rs));
          }
        }
        return List.copyOf(intents);
      });
    } catch (DuplicateCandidate d) {
      throw wrap("reading the pending intents", selectAllSql, d.cause);
    }
  }

  /** Marks this journal closed; the DataSource is the caller's and stays open. */
  @Override
  public void close() {
    closed = true;
  }

  @Override
  public String toString() {
    return "JdbcJournal[" + name + ", " + dialect + " table " + table + "]";
  }

  private Intent find(String key) {
    try {
      return inAutoCommit("reading the pending intent of key " + key, selectOneSql, c -> {
        try (PreparedStatement ps = c.prepareStatement(selectOneSql)) {
          ps.setString(1, key);
          try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? decode(rs) : null;
          }
        }
      });
    } catch (DuplicateCandidate d) {
      throw wrap("reading the pending intent of key " + key, selectOneSql, d.cause);
    }
  }

  private Intent decode(ResultSet rs) throws SQLException {
    String key = rs.getString(1);
    try {
      Intent intent = Intent.of(rs.getString(2), URI.create(rs.getString(3)));
      String headers = rs.getString(4);
      boolean plain = false;
      for (String line : headers.split("\n", -1)) {
        if (line.isEmpty()) {
          continue;
        }
        if (line.equals(PLAIN_BODY)) {
          plain = true;
          continue;
        }
        int colon = line.indexOf(": ");
        if (colon < 1) {
          throw new IllegalArgumentException("header line without ': ' separator");
        }
        intent = intent.withHeader(line.substring(0, colon), line.substring(colon + 2));
      }
      byte[] body = rs.getBytes(5);
      if (body == null) {
        body = new byte[0];
      } else if (!plain && Encryption.isSealed(body)) {
        body = SealedBodies.open(encryption, "journal '" + name + "' (table " + table + ")", key, intent.method(),
            intent.uri().toString(), body);
      }
      return intent.withBody(body).withKey(key);
    } catch (IllegalArgumentException e) {
      throw new JournalException("journal '" + name + "' (table " + table + "): the row of key " + key
          + " is not a valid intent: " + e.getMessage() + ". Delete the row or fix it by hand.", e);
    }
  }

  /**
   * One {@code Name: value} line per header. Names have no ':' and values no CR or LF, so this is unambiguous, and a
   * line that begins with ':' is no header: {@link #PLAIN_BODY}.
   */
  private static String encodeHeaders(Intent intent) {
    StringBuilder s = new StringBuilder();
    for (Map.Entry<String, String> h : intent.headers()) {
      s.append(h.getKey()).append(": ").append(h.getValue()).append('\n');
    }
    return s.toString();
  }

  /**
   * The size FileJournal's record of this intent would have (with the stored body, sealed or not), so that both
   * journals accept the same intents.
   */
  private void checkSize(Intent intent, String key, int bodyLength) {
    long size = 8 + 1 + 4 + utf8(key) + 4 + utf8(intent.method()) + 4 + utf8(intent.uri().toString()) + 4
        + 4 + (long) bodyLength;
    for (Map.Entry<String, String> h : intent.headers()) {
      size += 4 + utf8(h.getKey()) + 4 + utf8(h.getValue());
    }
    if (size > maxRecordBytes) {
      throw new JournalException("journal '" + name + "' (table " + table + "): the record of " + intent + " is "
          + size + " bytes, more than maxRecordBytes " + maxRecordBytes + ". Send smaller bodies or build the"
          + " journal with a larger maxRecordBytes.");
    }
  }

  private static long utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  private interface Work<R> {
    R run(Connection c) throws SQLException;
  }

  /** An integrity-constraint failure (a duplicate key, most likely): the caller decides. */
  private static final class DuplicateCandidate extends Exception {
    private static final long serialVersionUID = 1L;
    final transient SQLException cause;

    DuplicateCandidate(SQLException cause) {
      super(cause.getMessage(), cause, false, false);
      this.cause = cause;
    }
  }

  private <R> R inAutoCommit(String what, String sql, Work<R> work) throws DuplicateCandidate {
    Connection c;
    try {
      c = dataSource.getConnection();
    } catch (SQLException e) {
      throw wrap(what, "getting a connection", e);
    }
    try (c) {
      boolean autoCommit = c.getAutoCommit();
      try {
        R result = work.run(c);
        if (!autoCommit) {
          c.commit();
        }
        return result;
      } catch (SQLException e) {
        if (!autoCommit) {
          rollbackQuietly(c, e);
        }
        if (isIntegrityViolation(e)) {
          throw new DuplicateCandidate(e);
        }
        throw wrap(what, sql, e);
      }
    } catch (SQLException e) {
      throw wrap(what, sql, e);
    }
  }

  private static void rollbackQuietly(Connection c, SQLException e) {
    try {
      c.rollback();
    } catch (SQLException r) {
      e.addSuppressed(r);
    }
  }

  private boolean isIntegrityViolation(SQLException e) {
    String state = e.getSQLState();
    return e instanceof SQLIntegrityConstraintViolationException
        || state != null && state.startsWith("23")
        || dialect == Dialect.MARIADB && e.getErrorCode() == 1062;
  }

  private JournalException wrap(String what, String statement, SQLException e) {
    return new JournalException("journal '" + name + "' (" + dialect + " table " + table + "): " + what
        + " failed on [" + statement + "]: " + e.getMessage() + " (SQLState " + e.getSQLState() + ", error code "
        + e.getErrorCode() + ")", e);
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("journal '" + name + "' is closed");
    }
  }

  private static String createTableSql(Dialect dialect, String table) {
    switch (dialect) {
      case POSTGRESQL:
        return "CREATE TABLE IF NOT EXISTS " + table + " ("
            + "idem_key VARCHAR(255) NOT NULL PRIMARY KEY, "
            + "seq BIGINT GENERATED BY DEFAULT AS IDENTITY NOT NULL, "
            + "method VARCHAR(255) NOT NULL, "
            + "uri TEXT NOT NULL, "
            + "headers TEXT NOT NULL, "
            + "body BYTEA NOT NULL, "
            + "created_at BIGINT NOT NULL)";
      case MARIADB:
        return "CREATE TABLE IF NOT EXISTS " + table + " ("
            + "idem_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, "
            + "seq BIGINT NOT NULL AUTO_INCREMENT, "
            + "method VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, "
            + "uri MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
            + "headers MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
            + "body LONGBLOB NOT NULL, "
            + "created_at BIGINT NOT NULL, "
            + "PRIMARY KEY (idem_key), UNIQUE KEY (seq)) ENGINE=InnoDB";
      default:
        return "CREATE TABLE IF NOT EXISTS " + table + " ("
            + "idem_key VARCHAR(255) NOT NULL PRIMARY KEY, "
            + "seq BIGINT GENERATED BY DEFAULT AS IDENTITY NOT NULL, "
            + "method VARCHAR(255) NOT NULL, "
            + "uri CHARACTER LARGE OBJECT NOT NULL, "
            + "headers CHARACTER LARGE OBJECT NOT NULL, "
            + "body BINARY LARGE OBJECT NOT NULL, "
            + "created_at BIGINT NOT NULL)";
    }
  }

  private void createSchema() {
    String sql = createTableSql(dialect, table);
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      throw wrap("creating the table", sql, e);
    }
  }

  /** Mutable, not thread-safe. */
  public static final class Builder {
    private final DataSource dataSource;
    private String name = "jdbc-journal";
    private String table = DEFAULT_TABLE;
    private Dialect dialect;
    private boolean createSchemaIfMissing;
    private int maxRecordBytes = FileJournal.MAX_RECORD_BYTES;
    private Clock clock = Clock.systemUTC();
    private Encryption encryption;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** The journal's name in messages (default {@code jdbc-journal}); 1 to 64 characters. */
    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /** The table (default {@code idem_client_intent}); an SQL identifier, optionally schema-qualified. */
    public Builder table(String table) {
      if (table == null || !TABLE.matcher(table).matches()) {
        throw new IllegalArgumentException("table must be an SQL identifier, optionally schema-qualified"
            + " ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters per part), got '" + table + "'");
      }
      this.table = table;
      return this;
    }

    /** The dialect; detected from the database's product name when not set. */
    public Builder dialect(Dialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /** Runs the dialect's {@code CREATE TABLE IF NOT EXISTS} when the journal is built. Off by default. */
    public Builder createSchemaIfMissing(boolean create) {
      this.createSchemaIfMissing = create;
      return this;
    }

    /**
     * The largest record accepted (default {@link FileJournal#MAX_RECORD_BYTES}), measured as {@link FileJournal}
     * measures its records.
     *
     * @throws IllegalArgumentException unless {@code >= 64}
     */
    public Builder maxRecordBytes(int maxRecordBytes) {
      this.maxRecordBytes = FileJournal.checkMaxRecordBytes(maxRecordBytes);
      return this;
    }

    /** Seals request bodies at rest with {@code encryption} (see the class comment). Off by default. */
    public Builder encryption(Encryption encryption) {
      this.encryption = Objects.requireNonNull(encryption, "encryption");
      return this;
    }

    /** The clock of the {@code created_at} column (default the system UTC clock). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the journal, detecting the dialect unless set, and creating the table if asked to.
     *
     * @throws JournalException when the database cannot be reached or the table cannot be created
     * @throws IllegalArgumentException for an unsupported database
     */
    public JdbcJournal build() {
      Dialect d = dialect;
      if (d == null) {
        try (Connection c = dataSource.getConnection()) {
          d = Dialect.fromProductName(c.getMetaData().getDatabaseProductName());
        } catch (SQLException e) {
          throw new JournalException("journal '" + name + "' (table " + table + "): detecting the database dialect"
              + " failed: " + e.getMessage() + " (SQLState " + e.getSQLState() + ")", e);
        }
      }
      JdbcJournal journal = new JdbcJournal(this, d);
      if (createSchemaIfMissing) {
        journal.createSchema();
      }
      return journal;
    }
  }
}
