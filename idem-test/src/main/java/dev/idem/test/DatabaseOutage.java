package dev.idem.test;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A database outage for tests: a {@link DataSource} over a real one that refuses the next connections (SQLState
 * {@code 08001}, as a database that is restarting), then lends the real one's again. The SQL itself stays real. The
 * outage ends by counting refusals, never by time, so a test decides nothing by a race.
 *
 * <pre>{@code
 * DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 6);
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).table(table).build()).build();
 * // ... the first six transactions fail to connect, the seventh gets through
 * assertThat(outage.refused()).isEqualTo(6);
 * }</pre>
 */
public final class DatabaseOutage {
  private final DataSource real;
  private final AtomicInteger toRefuse = new AtomicInteger();
  private final AtomicInteger refused = new AtomicInteger();
  private final DataSource dataSource = new Refusing();

  private DatabaseOutage(DataSource real, int connections) {
    this.real = real;
    refuseNext(connections);
  }

  /** An outage over {@code real} that refuses its next {@code connections} connections (0: none for now). */
  public static DatabaseOutage refusing(DataSource real, int connections) {
    if (real == null) {
      throw new IllegalArgumentException("real must not be null");
    }
    return new DatabaseOutage(real, connections);
  }

  /** The data source to hand to the code under test. */
  public DataSource dataSource() {
    return dataSource;
  }

  /** Refuses the next {@code connections} connections on top of those still to be refused. */
  public void refuseNext(int connections) {
    if (connections < 0) {
      throw new IllegalArgumentException("connections must not be negative, got " + connections);
    }
    toRefuse.addAndGet(connections);
  }

  /** Ends the outage: the connections still to be refused are lent instead. */
  public void end() {
    toRefuse.set(0);
  }

  /** How many connections were refused so far. */
  public int refused() {
    return refused.get();
  }

  /** Whether the next connection would be refused. */
  public boolean isDown() {
    return toRefuse.get() > 0;
  }

  private Connection connect(ConnectionSource source) throws SQLException {
    if (toRefuse.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      refused.incrementAndGet();
      throw new SQLTransientConnectionException("connection refused (a test's database outage)", "08001");
    }
    return source.get();
  }

  @FunctionalInterface
  private interface ConnectionSource {
    Connection get() throws SQLException;
  }

  private final class Refusing implements DataSource {
    @Override
    public Connection getConnection() throws SQLException {
      return connect(real::getConnection);
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return connect(() -> real.getConnection(user, password));
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
      return real.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
      real.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      real.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return real.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      return real.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
      return real.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
      return real.isWrapperFor(type);
    }
  }
}
