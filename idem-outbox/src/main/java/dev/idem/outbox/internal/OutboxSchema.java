package dev.idem.outbox.internal;

import dev.idem.jdbc.JdbcDialect;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Runs a dialect's outbox/inbox schema file ({@code db/idem/<dialect>/V2__idem_outbox.sql}) with the configured names. */
public final class OutboxSchema {
  public static final String DEFAULT_OUTBOX = "idem_outbox";
  public static final String DEFAULT_INBOX = "idem_inbox";
  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");

  private OutboxSchema() {}

  public static String resource(JdbcDialect dialect) {
    return "db/idem/" + dialect.resourceFolder() + "/V2__idem_outbox.sql";
  }

  /** Checks a table name: an unqualified SQL identifier short enough for the derived index and table names. */
  public static String checkTable(String table) {
    if (table == null || !TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException("table must be an SQL identifier of at most 50 characters"
          + " ([A-Za-z_][A-Za-z0-9_]*), got '" + table + "'");
    }
    return table;
  }

  /**
   * The statements of the schema file, comments removed, with the outbox and inbox tables renamed. A null name leaves
   * that part out: {@code statements(d, "events", null)} is the outbox and its history only.
   */
  public static List<String> statements(JdbcDialect dialect, String outboxTable, String inboxTable) {
    String text;
    try (InputStream in = OutboxSchema.class.getClassLoader().getResourceAsStream(resource(dialect))) {
      if (in == null) {
        throw new IllegalStateException("schema resource " + resource(dialect) + " is missing from the classpath");
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StringBuilder body = new StringBuilder();
    for (String line : text.split("\n")) {
      String s = line.strip();
      if (!s.startsWith("--")) {
        int comment = line.indexOf(" -- ");
        body.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
      }
    }
    List<String> statements = new ArrayList<>();
    for (String s : body.toString().split(";\\s*\n")) {
      if (s.isBlank()) {
        continue;
      }
      boolean inbox = s.contains("idem_inbox");
      if (inbox ? outboxTable != null && inboxTable == null : inboxTable != null && outboxTable == null) {
        continue;
      }
      String replaced = s.strip();
      if (outboxTable != null) {
        replaced = replaced.replaceAll("\\bidem_outbox", checkTable(outboxTable));
      }
      if (inboxTable != null) {
        replaced = replaced.replaceAll("\\bidem_inbox", checkTable(inboxTable));
      }
      statements.add(replaced);
    }
    return statements;
  }

  /** Creates whatever of the tables and indexes is missing; idempotent. */
  public static void create(Connection c, JdbcDialect dialect, String outboxTable, String inboxTable)
      throws SQLException {
    dev.idem.jdbc.SchemaLock.run(c, dialect, statements(dialect, outboxTable, inboxTable));
  }
}
