package dev.idem.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;

/** The databases the JDBC stores support. Detected from the connection's metadata unless set explicitly. */
public enum JdbcDialect {
  /** PostgreSQL 15 and later. */
  POSTGRESQL,
  /** MariaDB 10.6 and later; MySQL 8 where the syntax matches. */
  MARIADB,
  /**
   * H2 2.x, the embedded default. For a file database that must survive a killed process, use {@code ;WRITE_DELAY=0}
   * in the URL: with the default write delay, a {@code kill -9} can lose transactions that had committed.
   */
  H2;

  /** The folder of this dialect's schema files, {@code db/idem/<folder>/} on the classpath: its name in lower case. */
  public String resourceFolder() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The dialect for a JDBC {@code DatabaseMetaData.getDatabaseProductName()}.
   *
   * @throws IllegalArgumentException for a database Idem does not support
   */
  public static JdbcDialect fromProductName(String productName) {
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
    throw new IllegalArgumentException("database '" + productName + "' is not supported; Idem's JDBC stores run on"
        + " PostgreSQL, MariaDB/MySQL and H2 (set the dialect explicitly only for one of these)");
  }

  /**
   * The dialect of the database behind {@code dataSource}, read from one connection's metadata.
   *
   * @param store the store asking, named in the exception when the database cannot be reached
   * @throws dev.idem.core.StoreException when no connection can be had
   * @throws IllegalArgumentException for a database Idem does not support
   */
  public static JdbcDialect detect(DataSource dataSource, String store) {
    try (Connection c = dataSource.getConnection()) {
      return fromProductName(c.getMetaData().getDatabaseProductName());
    } catch (SQLException e) {
      throw SqlErrors.wrap(store, null, "connecting to detect the database dialect", e);
    }
  }
}
