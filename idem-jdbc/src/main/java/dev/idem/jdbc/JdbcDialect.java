package dev.idem.jdbc;

import java.util.Locale;

/** The databases the JDBC stores support. Detected from the connection's metadata unless set explicitly. */
public enum JdbcDialect {
  /** PostgreSQL 15 and later. */
  POSTGRESQL("postgresql"),
  /** MariaDB 10.6 and later; MySQL 8 where the syntax matches. */
  MARIADB("mariadb"),
  /**
   * H2 2.x, the embedded default. For a file database that must survive a killed process, use {@code ;WRITE_DELAY=0}
   * in the URL: with the default write delay, a {@code kill -9} can lose transactions that had committed.
   */
  H2("h2");

  private final String resourceFolder;

  JdbcDialect(String resourceFolder) {
    this.resourceFolder = resourceFolder;
  }

  /** The folder of this dialect's schema files: {@code db/idem/<folder>/V1__idem_record.sql} on the classpath. */
  public String resourceFolder() {
    return resourceFolder;
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
}
