package dev.idem.outbox;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.internal.SqlErrors;
import dev.idem.outbox.internal.OutboxSchema;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The inbox of exactly-once consumers: {@link #process} records (consumer, event id) in the caller's transaction and
 * runs the handler there, so the effect and the record commit together or not at all. A redelivered event finds its
 * record and is skipped, getting the first run's result; the same id with another payload is refused.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(dataSource).build();
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   InboxResult r = inbox.process(c, "billing", eventId, body, conn -> {
 *     applyCharge(conn, body);
 *     return "ok";
 *   });
 *   c.commit();
 * }
 * }</pre>
 *
 * <p>Concurrent deliveries of one event serialise on the record's primary key: the second waits for the first's
 * transaction, then sees the record (a duplicate) or, if the first rolled back, processes the event itself.
 *
 * <p>The payload is compared by the SHA-256 of its exact bytes, so a re-serialised payload (other whitespace or key
 * order) counts as different: send the same bytes again, as brokers and webhook senders do.
 */
public final class Inbox {
  private static final HexFormat HEX = HexFormat.of();

  private final DataSource dataSource;
  private final JdbcDialect dialect;
  private final String table;
  private final Clock clock;
  private final int maxResultChars;
  private final InboxListener listener;
  private final String insert;
  private final String select;
  private final String complete;

  private Inbox(Builder b) {
    this.dataSource = b.dataSource;
    this.dialect = b.dialect;
    this.table = b.table;
    this.clock = b.clock;
    this.maxResultChars = b.maxResultChars;
    this.listener = b.listener;
    String columns = " (consumer, event_id, source, payload_hash, received_at) VALUES (?, ?, ?, ?, ?)";
    switch (dialect) {
      case POSTGRESQL:
        insert = "INSERT INTO " + table + columns + " ON CONFLICT (consumer, event_id) DO NOTHING";
        break;
      case MARIADB:
        // every value is checked against its column first, so IGNORE only ever ignores the duplicate key
        insert = "INSERT IGNORE INTO " + table + columns;
        break;
      default:
        insert = "INSERT INTO " + table + columns;
    }
    // a shared locking read sees the latest committed row whatever the transaction's snapshot; shared, because
    // concurrent duplicates all hold a shared lock on the key after their insert found it (an exclusive request
    // from each of them would deadlock on MariaDB)
    String read = "SELECT payload_hash, result, received_at FROM " + table + " WHERE consumer = ? AND event_id = ?";
    select = dialect == JdbcDialect.POSTGRESQL ? read + " FOR SHARE"
        : dialect == JdbcDialect.MARIADB ? read + " LOCK IN SHARE MODE" : read;
    complete = "UPDATE " + table + " SET processed_at = ?, result = ? WHERE consumer = ? AND event_id = ?";
  }

  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  public String table() {
    return table;
  }

  /** The data source {@link #processAndCommit} and the maintenance methods use. */
  public DataSource dataSource() {
    return dataSource;
  }

  /** As {@link #process(Connection, String, String, String, byte[], InboxHandler)} with no source. */
  public InboxResult process(Connection connection, String consumer, String eventId, byte[] payload,
      InboxHandler handler) {
    return process(connection, consumer, eventId, null, payload, handler);
  }

  /** As {@link #process(Connection, String, String, String, byte[], InboxHandler)} for a text payload, in UTF-8. */
  public InboxResult process(Connection connection, String consumer, String eventId, String payload,
      InboxHandler handler) {
    return process(connection, consumer, eventId, null, payload.getBytes(StandardCharsets.UTF_8), handler);
  }

  /**
   * Processes {@code eventId} once for {@code consumer}, on {@code connection} in the caller's open transaction
   * (auto-commit must be off). Does not commit, roll back or close the connection.
   *
   * @param source where the event came from (a queue, a webhook sender), kept for operators; may be null
   * @return whether it was a duplicate, and the kept result
   * @throws InboxPayloadMismatchException when the id was processed before with another payload
   * @throws InboxHandlerException wrapping what the handler threw; roll the transaction back
   */
  public InboxResult process(Connection connection, String consumer, String eventId, String source, byte[] payload,
      InboxHandler handler) {
    Objects.requireNonNull(connection, "connection");
    Limits.text("consumer", consumer, Limits.NAME);
    Limits.text("eventId", eventId, Limits.NAME);
    if (source != null) {
      Limits.text("source", source, Limits.NAME);
    }
    Objects.requireNonNull(payload, "payload");
    Objects.requireNonNull(handler, "handler");
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalStateException("the inbox runs in the caller's transaction: switch auto-commit off first");
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "checking the transaction", e);
    }
    String hash = sha256(payload);
    long now = clock.millis();
    try {
      if (!insert(connection, consumer, eventId, source, hash, now)) {
        return duplicate(connection, consumer, eventId, hash);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "recording event " + eventId + " for " + consumer, e);
    }
    String result;
    try {
      result = handler.handle(connection);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new InboxHandlerException(consumer, eventId, e);
    }
    if (result != null && result.length() > maxResultChars) {
      throw new InboxHandlerException(consumer, eventId, new IllegalStateException("the handler's result has "
          + result.length() + " characters; at most " + maxResultChars + " are kept"));
    }
    try (PreparedStatement ps = connection.prepareStatement(complete)) {
      ps.setLong(1, clock.millis());
      ps.setString(2, result);
      ps.setString(3, consumer);
      ps.setString(4, eventId);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "completing event " + eventId + " for " + consumer, e);
    }
    safely(() -> listener.processed(consumer));
    return new InboxResult(false, result, Instant.ofEpochMilli(now));
  }

  /**
   * Opens a transaction on the inbox's data source, processes the event in it and commits: for consumers that own
   * their transaction, such as a broker listener that acknowledges after this returns.
   */
  public InboxResult processAndCommit(String consumer, String eventId, String source, byte[] payload,
      InboxHandler handler) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      try {
        c.setAutoCommit(false);
        boolean committed = false;
        try {
          InboxResult r = process(c, consumer, eventId, source, payload, handler);
          c.commit();
          committed = true;
          return r;
        } finally {
          if (!committed) {
            // whatever was thrown (an Error too): switching auto-commit back on would otherwise commit half an effect
            try {
              c.rollback();
            } catch (SQLException ignored) {
              // the connection is broken; the pool discards it and the database rolls back
            }
          }
        }
      } finally {
        try {
          c.setAutoCommit(autoCommit);
        } catch (SQLException ignored) {
          // the pool validates the connection before lending it again
        }
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "committing event " + eventId + " for " + consumer, e);
    }
  }

  private boolean insert(Connection c, String consumer, String eventId, String source, String hash, long now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(insert)) {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
      ps.setString(3, source);
      ps.setString(4, hash);
      ps.setLong(5, now);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (dialect == JdbcDialect.H2 && SqlErrors.isUniqueViolation(dialect, e)) {
        return false; // H2 keeps the transaction usable after a failed statement
      }
      throw e;
    }
  }

  private InboxResult duplicate(Connection c, String consumer, String eventId, String hash) {
    try (PreparedStatement ps = c.prepareStatement(select)) {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("event " + eventId + " for " + consumer + " conflicted but is not there");
        }
        if (!rs.getString(1).trim().equals(hash)) {
          safely(() -> listener.payloadMismatch(consumer, eventId));
          throw new InboxPayloadMismatchException(consumer, eventId);
        }
        String result = rs.getString(2);
        Instant received = Instant.ofEpochMilli(rs.getLong(3));
        safely(() -> listener.duplicate(consumer));
        return new InboxResult(true, result, received);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "reading event " + eventId + " for " + consumer, e);
    }
  }

  /** Whether {@code consumer} has processed {@code eventId} (committed). */
  public boolean contains(String consumer, String eventId) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + table + " WHERE consumer = ? AND event_id = ?")) {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "looking up event " + eventId, e);
    }
  }

  /**
   * Deletes up to {@code batchSize} records received more than {@code retention} ago. Keep records longer than any
   * redelivery can take (a broker's redelivery window, a webhook sender's retry schedule, days not minutes).
   *
   * @return how many were deleted
   */
  public int purge(Duration retention, int batchSize) {
    if (retention.isNegative() || batchSize < 1) {
      throw new IllegalArgumentException("retention must not be negative and batchSize must be positive");
    }
    long before = clock.millis() - retention.toMillis();
    String sql;
    switch (dialect) {
      case POSTGRESQL:
        sql = "DELETE FROM " + table + " WHERE (consumer, event_id) IN (SELECT consumer, event_id FROM " + table
            + " WHERE received_at <= ? ORDER BY received_at LIMIT ? FOR UPDATE SKIP LOCKED)";
        break;
      case MARIADB:
        sql = "DELETE FROM " + table + " WHERE received_at <= ? ORDER BY received_at LIMIT ?";
        break;
      default:
        sql = "DELETE FROM " + table + " WHERE received_at <= ? FETCH FIRST ? ROWS ONLY";
    }
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      try {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setLong(1, before);
          ps.setInt(2, batchSize);
          return ps.executeUpdate();
        }
      } finally {
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "purging the inbox", e);
    }
  }

  /** Creates the inbox table where missing. */
  public void createSchemaIfMissing() {
    try (Connection c = dataSource.getConnection()) {
      OutboxSchema.create(c, dialect, null, table);
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "creating the inbox schema", e);
    }
  }

  static String sha256(byte[] payload) {
    try {
      return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(payload));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException ignored) {
      // listeners must not change the outcome
    }
  }

  @Override
  public String toString() {
    return "Inbox{" + dialect + ' ' + table + '}';
  }

  /** Builds an {@link Inbox}. */
  public static final class Builder {
    private final DataSource dataSource;
    private JdbcDialect dialect;
    private String table = OutboxSchema.DEFAULT_INBOX;
    private Clock clock = Clock.systemUTC();
    private int maxResultChars = 4000;
    private InboxListener listener = new InboxListener() {};
    private boolean createSchema;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    public Builder dialect(JdbcDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /** The inbox table (default {@code idem_inbox}). */
    public Builder table(String table) {
      this.table = OutboxSchema.checkTable(table);
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The longest handler result kept (default 4000 characters). */
    public Builder maxResultChars(int max) {
      if (max < 0 || max > 16_000) {
        // 16,000 characters of up to 4 bytes fit MariaDB's TEXT column
        throw new IllegalArgumentException("maxResultChars must be 0 to 16000, got " + max);
      }
      this.maxResultChars = max;
      return this;
    }

    public Builder listener(InboxListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    public Builder createSchemaIfMissing(boolean create) {
      this.createSchema = create;
      return this;
    }

    public Inbox build() {
      if (dialect == null) {
        dialect = Outbox.detect(dataSource);
      }
      Inbox inbox = new Inbox(this);
      if (createSchema) {
        inbox.createSchemaIfMissing();
      }
      return inbox;
    }
  }
}
