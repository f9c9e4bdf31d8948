package dev.idem.console;

import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoreException;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * {@link RecordSearch} in the table of a {@link JdbcIdempotencyStore}: one parameterised statement, cancelled after
 * {@link #QUERY_TIMEOUT_SECONDS}. Needs {@code dev.idem:idem-jdbc} on the class path. Thread-safe.
 *
 * <p>No index leads with the key (the primary key is scope, operation, key), so a search with a key part reads the
 * whole table: fine for an operator looking up a key now and then, not for anything on a request's path, which is
 * why the console's page does not repeat a search on its own more than twice a minute.
 */
public final class JdbcRecordSearch implements RecordSearch {
  /** Seconds a search may run before the driver cancels it: a slow scan must not hold a connection for long. */
  public static final int QUERY_TIMEOUT_SECONDS = 5;
  private static final char ESCAPE = '!';

  private final DataSource dataSource;
  private final String table;
  private final String storeName;

  private JdbcRecordSearch(JdbcIdempotencyStore store) {
    this.dataSource = store.dataSource();
    this.table = store.table();
    this.storeName = store.name();
  }

  /** A search in {@code store}'s table (its name was checked by the store's builder). */
  public static JdbcRecordSearch of(JdbcIdempotencyStore store) {
    return new JdbcRecordSearch(Objects.requireNonNull(store, "store"));
  }

  @Override
  public List<RecordKey> find(String keyPart, RecordState state, RecordKey after, int limit) {
    StringBuilder sql = new StringBuilder("SELECT scope, operation, idem_key FROM ").append(table)
        .append(" WHERE 1 = 1");
    List<Object> params = new ArrayList<>();
    if (keyPart != null) {
      sql.append(" AND idem_key LIKE ? ESCAPE '").append(ESCAPE).append('\'');
      params.add('%' + escape(keyPart) + '%');
    }
    if (state != null) {
      sql.append(" AND state = ?");
      params.add(state.name().toLowerCase(Locale.ROOT));
    }
    if (after != null) {
      sql.append(" AND (scope > ? OR (scope = ? AND (operation > ? OR (operation = ? AND idem_key > ?))))");
      String scope = after.scope().value();
      String operation = after.operation().name();
      params.addAll(List.of(scope, scope, operation, operation, after.key().value()));
    }
    sql.append(" ORDER BY scope, operation, idem_key LIMIT ?");
    params.add(limit);
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.toString())) {
      ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
      for (int i = 0; i < params.size(); i++) {
        ps.setObject(i + 1, params.get(i));
      }
      List<RecordKey> keys = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          keys.add(RecordKey.of(rs.getString(1), rs.getString(2), rs.getString(3)));
        }
      }
      return keys;
    } catch (SQLException e) {
      throw new StoreException(storeName, "the console's key search failed: " + e.getMessage(), e.getSQLState(),
          false, false, e);
    }
  }

  /** The text with LIKE's wildcards and the escape character taken literally. */
  static String escape(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (char ch : text.toCharArray()) {
      if (ch == '%' || ch == '_' || ch == ESCAPE) {
        out.append(ESCAPE);
      }
      out.append(ch);
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return "JdbcRecordSearch{" + table + '}';
  }
}
