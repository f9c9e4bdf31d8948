package dev.idem.outbox;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.SqlErrors;
import dev.idem.outbox.internal.OutboxSchema;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
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
 * <p>{@link #processBatch} does the same for a batch of events (a broker poll) with a fixed number of statements
 * whatever its size: on PostgreSQL and MariaDB one insert writes the records of all its events and tells which were
 * new, one locking read fetches the others, and the handler runs for the new ones only. Two batches that share events
 * serialise on those events' keys as single events do, without deadlocking whatever their order.
 *
 * <p>The payload is compared by the SHA-256 of its exact bytes, so a re-serialised payload (other whitespace or key
 * order) counts as different: send the same bytes again, as brokers and webhook senders do.
 *
 * <p>An inbox is immutable and thread-safe: share one per table. Each call uses the connection it is given (or one of
 * its own) from the calling thread only.
 *
 * <p>Implementation note, batches: the records of a batch are inserted in one statement, in Unicode code point order
 * of their ids (the order of the key on MariaDB, {@code utf8mb4_nopad_bin}), so every transaction takes its key locks
 * in one global order: two batches can wait for each other only one way. The handlers still run in the caller's
 * order. PostgreSQL inserts from {@code unnest} of arrays ({@code ON CONFLICT
 * DO NOTHING RETURNING}), one SQL text for every batch size. MariaDB inserts multi-row {@code INSERT IGNORE ...
 * RETURNING}: on 10.11, {@code RETURNING} lists only the rows actually inserted, also after waiting for a concurrent
 * transaction that inserted the same key and then committed (not listed) or rolled back (inserted and listed);
 * {@code MariaDbInboxReturningTest} pins this down. H2 inserts row by row, as {@link #process} does. The records of
 * a batch get {@code processed_at} in that insert (they become visible only when the caller commits), so only
 * non-null results need a second statement: one JDBC batch of updates. The events found already recorded are read in
 * one statement that locks exactly their rows: {@code = ANY(?) FOR SHARE} on PostgreSQL, which locks only the rows it
 * returns, and on MariaDB a {@code UNION ALL} of primary key lookups, as an {@code IN} list may lock (and wait for)
 * every row of the consumer.
 *
 * <p>Implementation note, a handler that catches an SQL error: PostgreSQL aborts the whole transaction on an error,
 * and pgjdbc then turns the commit into a silent rollback, so a handler that catches one (say, "insert and ignore a
 * unique violation") would lose the inbox records and every effect while the call reports them processed. The inbox's
 * statement after the handler fails in an aborted transaction (SQLState {@code 25P02}); where none would run (a batch
 * whose results are all null) a probe reads the batch's first new record back instead. That probe, and the update
 * counts of the statements after the handler, also catch a handler that rolled the transaction back, or caught an
 * error for which the database did (a deadlock on MariaDB rolls the whole transaction back and later statements run
 * in a new one): the record is then gone. A handler that switched auto-commit on is caught as well. Each of these is
 * an {@link InboxHandlerException}, before the caller's commit: the handler broke the transaction. A handler that must
 * recover from an SQL error rolls back to a savepoint it set.
 */
public final class Inbox {
  private static final HexFormat HEX = HexFormat.of();
  /** PostgreSQL's "current transaction is aborted, commands ignored until end of transaction block". */
  private static final String IN_FAILED_TRANSACTION = "25P02";

  private final DataSource dataSource;
  private final JdbcDialect dialect;
  private final String table;
  private final Clock clock;
  private final int maxResultChars;
  private final InboxListener listener;
  private final int maxBatchSize;
  private final String insert;
  private final String insertMany;
  private final String select;
  private final String selectMany;
  private final String complete;
  private final String probe;
  private final String keepResult;

  private Inbox(Builder b) {
    this.dataSource = b.dataSource;
    this.dialect = b.dialect;
    this.table = b.table;
    this.clock = b.clock;
    this.maxResultChars = b.maxResultChars;
    this.listener = b.listener;
    this.maxBatchSize = b.maxBatchSize;
    String columns = " (consumer, event_id, source, payload_hash, received_at, processed_at)";
    String values = columns + " VALUES (?, ?, ?, ?, ?, ?)";
    switch (dialect) {
      case POSTGRESQL:
        insert = "INSERT INTO " + table + values + " ON CONFLICT (consumer, event_id) DO NOTHING";
        insertMany = "INSERT INTO " + table + columns
            + " SELECT CAST(? AS VARCHAR), u.event_id, u.source, u.payload_hash, CAST(? AS BIGINT), CAST(? AS BIGINT)"
            + " FROM unnest(?::varchar[], ?::varchar[], ?::char(64)[]) WITH ORDINALITY"
            + " AS u(event_id, source, payload_hash, n) ORDER BY u.n"
            + " ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id";
        break;
      case MARIADB:
        // every value is checked against its column first, so IGNORE only ever ignores the duplicate key
        insert = "INSERT IGNORE INTO " + table + values;
        insertMany = "INSERT IGNORE INTO " + table + columns + " VALUES "; // rows and RETURNING added per batch
        break;
      default:
        insert = "INSERT INTO " + table + values;
        insertMany = null; // H2 inserts row by row
    }
    // a shared locking read sees the latest committed row whatever the transaction's snapshot; shared, because
    // concurrent duplicates all hold a shared lock on the key after their insert found it (an exclusive request
    // from each of them would deadlock on MariaDB)
    String read = "SELECT event_id, payload_hash, result, received_at FROM " + table
        + " WHERE consumer = ? AND event_id";
    String lockForShare = dialect == JdbcDialect.POSTGRESQL ? " FOR SHARE"
        : dialect == JdbcDialect.MARIADB ? " LOCK IN SHARE MODE" : "";
    select = read + " = ?" + lockForShare;
    switch (dialect) {
      case POSTGRESQL:
        selectMany = read + " = ANY(?)" + lockForShare;
        break;
      case MARIADB:
        // InnoDB locks every row a locking read examines, and for "consumer = ? AND event_id IN (...)" the optimizer
        // may scan all of the consumer's rows (it does on small tables), waiting for other transactions' new rows
        // and deadlocking with them; a UNION ALL of the single-event read is a primary key lookup per id, always
        selectMany = "(" + select + ")";
        break;
      default:
        selectMany = read + " IN ("; // the ids' placeholders are added per batch; H2's reads take no locks
    }
    complete = "UPDATE " + table + " SET processed_at = ?, result = ? WHERE consumer = ? AND event_id = ?";
    keepResult = "UPDATE " + table + " SET result = ? WHERE consumer = ? AND event_id = ?";
    probe = "SELECT 1 FROM " + table + " WHERE consumer = ? AND event_id = ?";
  }

  /** A builder of an inbox on {@code dataSource}; the dialect is detected from it unless set. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** The inbox table's name. */
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
   * @throws InboxHandlerException wrapping what the handler threw, or on PostgreSQL when the handler caught an SQL
   *     error that aborted the transaction (see the class notes); roll the transaction back
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
    requireTransaction(connection);
    String hash = sha256(payload);
    long now = clock.millis();
    try {
      if (!insert(connection, consumer, eventId, source, hash, now, null)) {
        return duplicate(connection, consumer, eventId, hash);
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "recording event " + eventId + " for " + consumer, e);
    }
    String result = kept(consumer, eventId, run(consumer, eventId, () -> handler.handle(connection)));
    try (PreparedStatement ps = connection.prepareStatement(complete)) {
      ps.setLong(1, clock.millis());
      ps.setString(2, result);
      ps.setString(3, consumer);
      ps.setString(4, eventId);
      if (ps.executeUpdate() != 1) {
        throw rowGone(consumer, eventId);
      }
    } catch (SQLException e) {
      throw afterHandler(consumer, eventId, "completing event " + eventId + " for " + consumer, e);
    }
    requireStillInTransaction(connection, consumer, eventId);
    safely(() -> listener.processed(consumer));
    return new InboxResult(false, result, Instant.ofEpochMilli(now));
  }

  /**
   * Opens a transaction on the inbox's data source, processes the event in it and commits: for consumers that own
   * their transaction, such as a broker listener that acknowledges after this returns.
   */
  public InboxResult processAndCommit(String consumer, String eventId, String source, byte[] payload,
      InboxHandler handler) {
    return inTransaction("committing event " + eventId + " for " + consumer,
        c -> process(c, consumer, eventId, source, payload, handler));
  }

  /**
   * Processes a batch of events once each for {@code consumer}, on {@code connection} in the caller's open transaction
   * (auto-commit must be off), running {@code handler} once per new event in the batch's order. Does not commit, roll
   * back or close the connection. The arguments are checked before the first write; on PostgreSQL and MariaDB the
   * records of the batch are written by one statement (see the class notes).
   *
   * <p>An id that comes twice in the batch with the same payload is processed once: the later one is a duplicate
   * with the first one's result. With another payload the batch is refused before anything is written. The listener
   * hears of every event of the batch: processed, or duplicate (a repeat within the batch too).
   *
   * @param events at most {@link Builder#maxBatchSize} events, not empty
   * @return one result per event of {@code events}, in the same order: whether it was a duplicate, and the kept result
   * @throws InboxPayloadMismatchException for the first event (in the batch's order) whose id was processed before, or
   *     comes earlier in the batch, with another payload; no handler ran: roll the transaction back
   * @throws InboxHandlerException wrapping what the handler threw, naming the failing event, or when a result is
   *     longer than {@link Builder#maxResultChars}, or on PostgreSQL when a handler caught an SQL error that aborted
   *     the transaction (naming the batch's first new event; see the class notes); roll the transaction back, nothing
   *     of the batch counts
   */
  public List<InboxResult> processBatch(Connection connection, String consumer, List<InboxEvent> events,
      InboxEventHandler handler) {
    Objects.requireNonNull(handler, "handler");
    return processBatchWith(connection, consumer, events, (c, fresh) -> {
      String[] results = new String[fresh.size()];
      for (int i = 0; i < results.length; i++) {
        InboxEvent event = fresh.get(i);
        results[i] = kept(consumer, event.eventId(), run(consumer, event.eventId(), () -> handler.handle(c, event)));
      }
      return results;
    });
  }

  /**
   * As {@link #processBatch(Connection, String, List, InboxEventHandler)}, with one call of {@code handler} for all
   * the new events of the batch (none when there are none), for effects that are cheaper in bulk.
   *
   * @throws InboxHandlerException wrapping what the handler threw, naming the batch's first new event; or when it
   *     returns a list whose size is not the number of new events, or a result longer than
   *     {@link Builder#maxResultChars} (naming that event); or on PostgreSQL when it caught an SQL error that aborted
   *     the transaction (naming the batch's first new event); roll the transaction back
   */
  public List<InboxResult> processBatchAtOnce(Connection connection, String consumer, List<InboxEvent> events,
      InboxBatchHandler handler) {
    Objects.requireNonNull(handler, "handler");
    return processBatchWith(connection, consumer, events, (c, fresh) -> {
      String firstId = fresh.get(0).eventId();
      List<String> returned = run(consumer, firstId, () -> handler.handle(c, fresh));
      String[] results = new String[fresh.size()];
      if (returned == null) {
        return results;
      }
      if (returned.size() != results.length) {
        throw new InboxHandlerException(consumer, firstId, new IllegalStateException("the batch handler returned "
            + returned.size() + " results for " + results.length + " new events: return one per event, in order,"
            + " or null"));
      }
      for (int i = 0; i < results.length; i++) {
        results[i] = kept(consumer, fresh.get(i).eventId(), returned.get(i));
      }
      return results;
    });
  }

  /**
   * Opens a transaction on the inbox's data source, processes the batch in it and commits; rolls back on any failure.
   * For consumers that own their transaction, such as a broker listener that commits its offsets after this returns.
   */
  public List<InboxResult> processBatchAndCommit(String consumer, List<InboxEvent> events,
      InboxEventHandler handler) {
    Objects.requireNonNull(events, "events");
    return inTransaction("committing " + events.size() + " events for " + consumer,
        c -> processBatch(c, consumer, events, handler));
  }

  /** As {@link #processBatchAndCommit} with one handler call for the new events ({@link #processBatchAtOnce}). */
  public List<InboxResult> processBatchAtOnceAndCommit(String consumer, List<InboxEvent> events,
      InboxBatchHandler handler) {
    Objects.requireNonNull(events, "events");
    return inTransaction("committing " + events.size() + " events for " + consumer,
        c -> processBatchAtOnce(c, consumer, events, handler));
  }

  private <T> T inTransaction(String what, Function<Connection, T> work) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      try {
        c.setAutoCommit(false);
        boolean committed = false;
        try {
          T r = work.apply(c);
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
      throw SqlErrors.wrap(table, dialect, what, e);
    }
  }

  /** The effects of a batch's new events: one result per event, in order, each already checked by {@link #kept}. */
  @FunctionalInterface
  private interface Effects {
    String[] apply(Connection connection, List<InboxEvent> fresh);
  }

  private List<InboxResult> processBatchWith(Connection connection, String consumer, List<InboxEvent> events,
      Effects effects) {
    Objects.requireNonNull(connection, "connection");
    Limits.text("consumer", consumer, Limits.NAME);
    Objects.requireNonNull(events, "events");
    List<InboxEvent> batch = new ArrayList<>(events);
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("events must not be empty");
    }
    if (batch.size() > maxBatchSize) {
      throw new IllegalArgumentException("a batch of " + batch.size() + " events is larger than maxBatchSize "
          + maxBatchSize + ": split it, or raise maxBatchSize (at most 10000)");
    }
    for (int i = 0; i < batch.size(); i++) {
      Objects.requireNonNull(batch.get(i), "events[" + i + "]");
    }
    requireTransaction(connection);

    int n = batch.size();
    String[] hashes = new String[n];
    int[] first = new int[n]; // the index of the first event with the same id
    Map<String, Integer> firstById = new HashMap<>();
    List<Integer> distinct = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String eventId = batch.get(i).eventId();
      hashes[i] = sha256(batch.get(i).payload());
      Integer earlier = firstById.putIfAbsent(eventId, i);
      first[i] = earlier == null ? i : earlier;
      if (earlier == null) {
        distinct.add(i);
      } else {
        checkPayload(consumer, eventId, hashes[i], hashes[earlier]);
      }
    }
    distinct.sort((x, y) -> byCodePoint(batch.get(x).eventId(), batch.get(y).eventId()));

    long now = clock.millis();
    Set<String> inserted;
    try {
      inserted = insertMany(connection, consumer, batch, hashes, distinct, now);
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "recording " + distinct.size() + " events for " + consumer, e);
    }
    List<String> existing = new ArrayList<>();
    for (int i : distinct) {
      if (!inserted.contains(batch.get(i).eventId())) {
        existing.add(batch.get(i).eventId());
      }
    }
    Map<String, Stored> stored = existing.isEmpty() ? Map.of() : readMany(connection, consumer, existing);
    List<InboxEvent> fresh = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String eventId = batch.get(i).eventId();
      if (first[i] != i) {
        continue;
      }
      if (inserted.contains(eventId)) {
        fresh.add(batch.get(i));
      } else {
        checkPayload(consumer, eventId, hashes[i], found(consumer, eventId, stored.get(eventId)).hash());
      }
    }

    String[] results = fresh.isEmpty() ? new String[0]
        : effects.apply(connection, Collections.unmodifiableList(fresh));
    if (!fresh.isEmpty()) {
      if (!keepResults(connection, consumer, fresh, results)) {
        checkStillRecorded(connection, consumer, fresh.get(0).eventId());
      }
      requireStillInTransaction(connection, consumer, fresh.get(0).eventId());
    }
    InboxResult[] outcome = new InboxResult[n];
    int next = 0;
    for (int i = 0; i < n; i++) {
      String eventId = batch.get(i).eventId();
      if (first[i] != i) {
        outcome[i] = new InboxResult(true, outcome[first[i]].result(), outcome[first[i]].firstReceivedAt());
        safely(() -> listener.duplicate(consumer));
      } else if (inserted.contains(eventId)) {
        outcome[i] = new InboxResult(false, results[next++], Instant.ofEpochMilli(now));
        safely(() -> listener.processed(consumer));
      } else {
        Stored r = stored.get(eventId);
        outcome[i] = new InboxResult(true, r.result(), Instant.ofEpochMilli(r.receivedAt()));
        safely(() -> listener.duplicate(consumer));
      }
    }
    return List.of(outcome);
  }

  /** Writes the records of {@code distinct} (indexes into {@code batch}, in lock order); returns the ids inserted. */
  private Set<String> insertMany(Connection c, String consumer, List<InboxEvent> batch, String[] hashes,
      List<Integer> distinct, long now) throws SQLException {
    int size = distinct.size();
    String[] ids = new String[size];
    String[] sources = new String[size];
    String[] rowHashes = new String[size];
    for (int k = 0; k < size; k++) {
      InboxEvent event = batch.get(distinct.get(k));
      ids[k] = event.eventId();
      sources[k] = event.source();
      rowHashes[k] = hashes[distinct.get(k)];
    }
    Set<String> inserted = new HashSet<>();
    if (dialect == JdbcDialect.H2) {
      for (int k = 0; k < size; k++) {
        if (insert(c, consumer, ids[k], sources[k], rowHashes[k], now, now)) {
          inserted.add(ids[k]);
        }
      }
      return inserted;
    }
    String sql = insertMany;
    if (dialect == JdbcDialect.MARIADB) {
      StringBuilder rows = new StringBuilder(insertMany);
      for (int k = 0; k < size; k++) {
        rows.append(k == 0 ? "(?, ?, ?, ?, ?, ?)" : ", (?, ?, ?, ?, ?, ?)");
      }
      sql = rows.append(" RETURNING event_id").toString();
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      if (dialect == JdbcDialect.POSTGRESQL) {
        ps.setString(1, consumer);
        ps.setLong(2, now);
        ps.setLong(3, now);
        ps.setArray(4, c.createArrayOf("varchar", ids));
        ps.setArray(5, c.createArrayOf("varchar", sources));
        ps.setArray(6, c.createArrayOf("varchar", rowHashes));
      } else {
        for (int k = 0, p = 1; k < size; k++) {
          ps.setString(p++, consumer);
          ps.setString(p++, ids[k]);
          ps.setString(p++, sources[k]);
          ps.setString(p++, rowHashes[k]);
          ps.setLong(p++, now);
          ps.setLong(p++, now);
        }
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          inserted.add(rs.getString(1));
        }
      }
    }
    return inserted;
  }

  /** The records of {@code eventIds} (all known to exist), read with a shared lock, by id. */
  private Map<String, Stored> readMany(Connection c, String consumer, List<String> eventIds) {
    int size = eventIds.size();
    String sql;
    switch (dialect) {
      case POSTGRESQL:
        sql = selectMany;
        break;
      case MARIADB:
        sql = String.join(" UNION ALL ", Collections.nCopies(size, selectMany));
        break;
      default:
        sql = selectMany + String.join(", ", Collections.nCopies(size, "?")) + ")";
    }
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
          stored.put(rs.getString(1), stored(rs));
        }
      }
      return stored;
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "reading " + size + " events for " + consumer, e);
    }
  }

  /** Keeps the non-null results of a batch's new events, in one JDBC batch; returns whether there were any. */
  private boolean keepResults(Connection c, String consumer, List<InboxEvent> fresh, String[] results) {
    if (Arrays.stream(results).allMatch(Objects::isNull)) {
      return false;
    }
    try (PreparedStatement ps = c.prepareStatement(keepResult)) {
      for (int k = 0; k < results.length; k++) {
        if (results[k] != null) {
          ps.setString(1, results[k]);
          ps.setString(2, consumer);
          ps.setString(3, fresh.get(k).eventId());
          ps.addBatch();
        }
      }
      int[] counts = ps.executeBatch();
      boolean unknown = false;
      for (int k = 0, row = 0; k < results.length; k++) {
        if (results[k] != null) {
          int count = counts[row++];
          if (count == 0) {
            throw rowGone(consumer, fresh.get(k).eventId());
          }
          unknown |= count == Statement.SUCCESS_NO_INFO;
        }
      }
      return !unknown; // a driver that reports no counts leaves the check to the probe
    } catch (SQLException e) {
      throw afterHandler(consumer, fresh.get(0).eventId(),
          "keeping the results of " + fresh.size() + " events for " + consumer, e);
    }
  }

  /**
   * Where no statement of the inbox follows the handlers: checks, in one round trip, that the batch's first new record
   * is still there. It is not when a handler rolled the transaction back, or when the database did and the handler
   * caught the error (a deadlock on MariaDB rolls the whole transaction back, and later statements run in a new one).
   * On PostgreSQL the statement also fails if a handler caught an error that aborted the transaction, which the
   * commit would otherwise silently roll back.
   */
  private void checkStillRecorded(Connection c, String consumer, String eventId) {
    try (PreparedStatement ps = c.prepareStatement(probe)) {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw rowGone(consumer, eventId);
        }
      }
    } catch (SQLException e) {
      throw afterHandler(consumer, eventId, "checking the transaction after the handler for " + consumer, e);
    }
  }

  /** A handler that switched auto-commit on has committed part of the work on its own: a handler failure. */
  private void requireStillInTransaction(Connection c, String consumer, String eventId) {
    boolean autoCommit;
    try {
      autoCommit = c.getAutoCommit();
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "checking the transaction after the handler", e);
    }
    if (autoCommit) {
      throw new InboxHandlerException(consumer, eventId, new IllegalStateException("the handler switched auto-commit"
          + " on: the inbox and the effects must commit together, in the caller's transaction"));
    }
  }

  private static InboxHandlerException rowGone(String consumer, String eventId) {
    return new InboxHandlerException(consumer, eventId, new IllegalStateException("the inbox record is gone from the"
        + " transaction: the handler rolled it back, or caught an error for which the database rolled it back (e.g. a"
        + " deadlock); roll back, and the event will be processed again"));
  }

  /**
   * What a failed statement of the inbox after the handler means: on PostgreSQL, SQLState {@code 25P02} says an earlier
   * statement failed and the transaction is aborted; the inbox's own statements before the handler succeeded, so the
   * handler caught that error: a handler failure, retried and eventually given up on as such. Anything else is the
   * store's.
   */
  private RuntimeException afterHandler(String consumer, String eventId, String what, SQLException e) {
    if (dialect == JdbcDialect.POSTGRESQL && IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
      SQLException aborted = new SQLException("the transaction was aborted by an error the handler caught; roll back"
          + " (a handler must rethrow SQL errors, or roll back to a savepoint it set to recover from one): "
          + e.getMessage(), e.getSQLState(), e.getErrorCode(), e);
      return new InboxHandlerException(consumer, eventId, aborted);
    }
    return SqlErrors.wrap(table, dialect, what, e);
  }

  private void requireTransaction(Connection connection) {
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalStateException("the inbox runs in the caller's transaction: switch auto-commit off first");
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(table, dialect, "checking the transaction", e);
    }
  }

  /** Runs a handler, wrapping what it throws. */
  private static <T> T run(String consumer, String eventId, Callable<T> handler) {
    try {
      return handler.call();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new InboxHandlerException(consumer, eventId, e);
    }
  }

  /** A handler's result, refused when too long to keep. */
  private String kept(String consumer, String eventId, String result) {
    if (result != null && result.length() > maxResultChars) {
      throw new InboxHandlerException(consumer, eventId, new IllegalStateException("the handler's result has "
          + result.length() + " characters; at most " + maxResultChars + " are kept"));
    }
    return result;
  }

  private void checkPayload(String consumer, String eventId, String hash, String recordedHash) {
    if (!recordedHash.trim().equals(hash)) {
      safely(() -> listener.payloadMismatch(consumer, eventId));
      throw new InboxPayloadMismatchException(consumer, eventId);
    }
  }

  /** What a locking read found of a record. */
  private record Stored(String hash, String result, long receivedAt) {}

  private static Stored stored(ResultSet rs) throws SQLException {
    return new Stored(rs.getString(2), rs.getString(3), rs.getLong(4));
  }

  private static Stored found(String consumer, String eventId, Stored stored) {
    if (stored == null) {
      throw new IllegalStateException("event " + eventId + " for " + consumer + " conflicted but is not there");
    }
    return stored;
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

  private boolean insert(Connection c, String consumer, String eventId, String source, String hash, long now,
      Long processedAt) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(insert)) {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
      ps.setString(3, source);
      ps.setString(4, hash);
      ps.setLong(5, now);
      if (processedAt == null) {
        ps.setNull(6, Types.BIGINT);
      } else {
        ps.setLong(6, processedAt);
      }
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
        Stored r = found(consumer, eventId, rs.next() ? stored(rs) : null);
        checkPayload(consumer, eventId, hash, r.hash());
        safely(() -> listener.duplicate(consumer));
        return new InboxResult(true, r.result(), Instant.ofEpochMilli(r.receivedAt()));
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
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable ignored) {
      // listeners must not change the outcome, whatever they throw
    }
  }

  @Override
  public String toString() {
    return "Inbox{" + dialect + ' ' + table + '}';
  }

  /** Builds an {@link Inbox}. Mutable and not thread-safe; {@link #build} copies it into an immutable inbox. */
  public static final class Builder {
    private final DataSource dataSource;
    private JdbcDialect dialect;
    private String table = OutboxSchema.DEFAULT_INBOX;
    private Clock clock = Clock.systemUTC();
    private int maxResultChars = 4000;
    private int maxBatchSize = 1000;
    private InboxListener listener = new InboxListener() {};
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
      this.table = OutboxSchema.checkTable(table);
      return this;
    }

    /** The clock of {@code received_at}, {@code processed_at} and {@link Inbox#purge} (default UTC system clock). */
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

    /**
     * The most events {@link Inbox#processBatch} takes at once (default 1000, at most 10000: on MariaDB each event is
     * six parameters of one statement, and a server-side prepared statement takes at most 65535).
     */
    public Builder maxBatchSize(int max) {
      if (max < 1 || max > 10_000) {
        throw new IllegalArgumentException("maxBatchSize must be 1 to 10000, got " + max);
      }
      this.maxBatchSize = max;
      return this;
    }

    /** Hooks for meters (default: none). */
    public Builder listener(InboxListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** Whether {@link #build} creates the inbox table where missing (default false: migrations create it). */
    public Builder createSchemaIfMissing(boolean create) {
      this.createSchema = create;
      return this;
    }

    /** An inbox with this configuration; detects the dialect if unset and creates the table if asked to. */
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
