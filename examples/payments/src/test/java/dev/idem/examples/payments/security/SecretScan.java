package dev.idem.examples.payments.security;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Greps text and every column of every table for secrets: the exact values given (API keys, admin keys, webhook
 * secrets, {@code Authorization} values), and any bearer credential ({@code Bearer <token>}, whatever the token). A
 * placeholder such as {@code Bearer <api key>} and a {@code WWW-Authenticate: Bearer realm=...} challenge are not
 * credentials. Used after a workload (or a chaos run) on the service's logs and database. Stateless and thread-safe.
 */
public final class SecretScan {
  /** {@code Bearer} and a token: not a placeholder in angle brackets, not an auth-param such as {@code realm=}. */
  public static final Pattern BEARER_CREDENTIAL =
      Pattern.compile("(?i)\\bbearer\\s+(?![a-z]+=\")(?!<)[A-Za-z0-9._~+/-]+=*");
  private static final int EXCERPT = 60;

  private SecretScan() {}

  /**
   * One place a secret was seen.
   *
   * @param where what was scanned: {@code table.column (row n)}, or the name given to {@link #scanText}
   * @param secret the secret, or the bearer credential matched
   * @param excerpt the text around it
   */
  public record Finding(String where, String secret, String excerpt) {
    /** The table and column of a table finding ({@code table.column}), or {@code where} itself. */
    public String column() {
      int row = where.indexOf(" (row ");
      return row < 0 ? where : where.substring(0, row);
    }
  }

  /** Every occurrence of a secret or a bearer credential in {@code text}, found under the name {@code where}. */
  public static List<Finding> scanText(String where, String text, Set<String> secrets) {
    List<Finding> findings = new ArrayList<>();
    if (text == null || text.isEmpty()) {
      return findings;
    }
    for (String secret : secrets) {
      if (secret.isEmpty()) {
        throw new IllegalArgumentException("an empty secret would match everywhere");
      }
      for (int at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
        findings.add(new Finding(where, secret, excerpt(text, at, secret.length())));
      }
    }
    Matcher m = BEARER_CREDENTIAL.matcher(text);
    while (m.find()) {
      findings.add(new Finding(where, m.group(), excerpt(text, m.start(), m.end() - m.start())));
    }
    return findings;
  }

  /** {@link #scanText(String, String, Set)} under the name {@code text}. */
  public static List<Finding> scanText(String text, Set<String> secrets) {
    return scanText("text", text, secrets);
  }

  /**
   * Every occurrence of a secret or a bearer credential in any column of any table of the connection's current
   * catalog and schema. Binary columns are read as UTF-8 text (stored response bodies are bytes); every other column
   * as its text value.
   */
  public static List<Finding> scanTables(DataSource dataSource, Set<String> secrets) {
    List<Finding> findings = new ArrayList<>();
    try (Connection c = dataSource.getConnection()) {
      for (String table : tables(c)) {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
          ResultSetMetaData meta = rs.getMetaData();
          long row = 0;
          while (rs.next()) {
            row++;
            for (int i = 1; i <= meta.getColumnCount(); i++) {
              String where = table.toLowerCase(Locale.ROOT) + "." + meta.getColumnName(i).toLowerCase(Locale.ROOT)
                  + " (row " + row + ")";
              findings.addAll(scanText(where, text(rs.getObject(i)), secrets));
            }
          }
        }
      }
    } catch (SQLException | IOException e) {
      throw new IllegalStateException("cannot scan the tables: " + e.getMessage(), e);
    }
    return findings;
  }

  /** The tables of the current catalog and schema. */
  public static List<String> tables(Connection c) throws SQLException {
    List<String> tables = new ArrayList<>();
    DatabaseMetaData meta = c.getMetaData();
    String schema = c.getSchema();
    try (ResultSet rs = meta.getTables(c.getCatalog(), schema, "%", new String[] {"TABLE"})) {
      while (rs.next()) {
        tables.add(rs.getString("TABLE_NAME"));
      }
    }
    if (tables.isEmpty()) {
      throw new IllegalStateException("no tables in catalog " + c.getCatalog() + ", schema " + schema);
    }
    return tables;
  }

  private static String text(Object value) throws SQLException, IOException {
    if (value == null) {
      return null;
    }
    if (value instanceof byte[]) {
      return new String((byte[]) value, StandardCharsets.UTF_8);
    }
    if (value instanceof Blob) {
      Blob blob = (Blob) value;
      return new String(blob.getBytes(1, (int) blob.length()), StandardCharsets.UTF_8);
    }
    if (value instanceof Clob) {
      StringBuilder out = new StringBuilder();
      try (Reader r = ((Clob) value).getCharacterStream()) {
        char[] buffer = new char[8192];
        for (int n = r.read(buffer); n >= 0; n = r.read(buffer)) {
          out.append(buffer, 0, n);
        }
      }
      return out.toString();
    }
    return value.toString();
  }

  private static String excerpt(String text, int at, int length) {
    int from = Math.max(0, at - EXCERPT);
    int to = Math.min(text.length(), at + length + EXCERPT);
    return text.substring(from, to).replace('\n', ' ');
  }
}
