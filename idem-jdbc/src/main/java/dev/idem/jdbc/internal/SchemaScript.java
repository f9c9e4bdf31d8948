package dev.idem.jdbc.internal;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.SchemaLock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one runner of every schema file: reads a dialect's file from the classpath, keeps the statements of one table
 * (with its indexes and side tables), renames them to the configured table and runs them under {@link SchemaLock}.
 */
public enum SchemaScript {
  /**
   * The idempotency records: {@code V1__idem_record.sql}, then {@code V3__idem_record_key_nonce.sql},
   * {@code V4__idem_record_retention.sql}, {@code V5__idem_record_uncertain.sql} (with the audit table
   * {@code <table>_audit}) and {@code V6__idem_record_expiry_index.sql}.
   */
  RECORD("idem_record", "V1__idem_record.sql", "V3__idem_record_key_nonce.sql", "V4__idem_record_retention.sql",
      "V5__idem_record_uncertain.sql", "V6__idem_record_expiry_index.sql"),
  /**
   * The idempotency records partitioned by the time each row is gone (PostgreSQL only):
   * {@code partitioned/V1__idem_record_partitioned.sql}, then the uncertain records' column, index and audit table of
   * {@code V5__idem_record_uncertain.sql}, which apply to a partitioned table as they are.
   */
  RECORD_PARTITIONED("idem_record", "partitioned/V1__idem_record_partitioned.sql", "V5__idem_record_uncertain.sql"),
  /**
   * The outbox and its attempt history: the outbox half of {@code V2__idem_outbox.sql}, then the purge's index of
   * {@code V7__idem_outbox_finished_index.sql}.
   */
  OUTBOX("idem_outbox", "V2__idem_outbox.sql", "V7__idem_outbox_finished_index.sql"),
  /** The inbox: the inbox half of {@code V2__idem_outbox.sql}. */
  INBOX("idem_inbox", "V2__idem_outbox.sql");

  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");

  private final List<String> files;
  private final String table;
  private final Pattern mentions;
  /** The table's name and the names derived from it, after the keyword that makes a derived name a table's. */
  private final Pattern names;

  SchemaScript(String table, String... files) {
    this.files = List.of(files);
    this.table = table;
    this.mentions = Pattern.compile("\\b" + table + "\\b|\\b" + table + "_");
    this.names = Pattern.compile("\\b((?:TABLE(?: IF NOT EXISTS)?|REFERENCES)\\s+)?" + table + "(_\\w+)?\\b");
  }

  /** The default table name, as the schema file spells it. */
  public String defaultTable() {
    return table;
  }

  /** The classpath resources of a dialect's schema files for this table, in the order they run, comma-separated. */
  public String resource(JdbcDialect dialect) {
    return String.join(", ", resources(dialect));
  }

  /** The classpath resources of a dialect's schema files for this table, in the order they run. */
  public List<String> resources(JdbcDialect dialect) {
    return files.stream().map(f -> "db/idem/" + dialect.resourceFolder() + "/" + f).toList();
  }

  /**
   * Checks an unqualified table name: an SQL identifier short enough for the names derived from it.
   *
   * @throws IllegalArgumentException otherwise
   */
  public static String checkTable(String table) {
    if (table == null || !TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException("table must be an SQL identifier of at most 50 characters"
          + " ([A-Za-z_][A-Za-z0-9_]*), got '" + table + "'");
    }
    return table;
  }

  /**
   * The statements of this table in the dialect's file, comments removed, renamed to {@code name}. The name may be
   * schema-qualified: the side tables derived from it ({@code <table>_audit}, {@code <table>_attempt}) are created in
   * the same schema, and the index names derived from it take only its last part (an index always lives in its
   * table's schema), except where a {@code DROP INDEX} finds an index by its name alone.
   */
  public List<String> statements(JdbcDialect dialect, String name) {
    StringBuilder text = new StringBuilder();
    for (String resource : resources(dialect)) {
      try (InputStream in = SchemaScript.class.getClassLoader().getResourceAsStream(resource)) {
        if (in == null) {
          throw new IllegalStateException("schema resource " + resource + " is missing from the classpath");
        }
        text.append(new String(in.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    StringBuilder body = new StringBuilder();
    for (String line : text.toString().split("\n")) {
      if (!line.strip().startsWith("--")) {
        int comment = line.indexOf(" -- ");
        body.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
      }
    }
    String schema = name.contains(".") ? name.substring(0, name.indexOf('.') + 1) : "";
    String simple = name.substring(schema.length());
    List<String> statements = new ArrayList<>();
    for (String s : body.toString().split(";\\s*\n")) {
      if (s.isBlank() || !mentions.matcher(s).find()) {
        continue;
      }
      String statement = s.strip();
      // DROP INDEX finds an index by its own name, in its table's schema (but MariaDB's DROP INDEX ... ON <table>
      // takes a plain name and finds it on the table)
      boolean dropByName = statement.startsWith("DROP INDEX") && !statement.contains(" ON ");
      statements.add(names.matcher(statement).replaceAll(m -> {
        String before = m.group(1) == null ? "" : m.group(1);
        if (m.group(2) == null) {
          return Matcher.quoteReplacement(before + name);
        }
        // a derived table lives in the table's schema; an index or constraint is named without a schema
        boolean qualified = dropByName || !before.isEmpty();
        return Matcher.quoteReplacement(before + (qualified ? schema : "") + simple + m.group(2));
      }));
    }
    return statements;
  }

  /** Creates whatever is missing of the table, its indexes and side tables; idempotent. */
  public void run(Connection c, JdbcDialect dialect, String name) throws SQLException {
    SchemaLock.run(c, dialect, statements(dialect, name));
  }
}
