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

/** Reads a dialect's schema file from the classpath and runs it, with the configured table name. */
public final class SchemaScript {
  public static final String DEFAULT_TABLE = "idem_record";

  private SchemaScript() {}

  /** The classpath resource of a dialect's schema file. */
  public static String resource(JdbcDialect dialect) {
    return "db/idem/" + dialect.resourceFolder() + "/V1__idem_record.sql";
  }

  /** The statements of the schema file for a table, comments removed. */
  public static List<String> statements(JdbcDialect dialect, String table) {
    String text;
    try (InputStream in = SchemaScript.class.getClassLoader().getResourceAsStream(resource(dialect))) {
      if (in == null) {
        throw new IllegalStateException("schema resource " + resource(dialect) + " is missing from the classpath");
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String simple = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
    StringBuilder body = new StringBuilder();
    for (String line : text.split("\n")) {
      if (!line.strip().startsWith("--")) {
        body.append(line).append('\n');
      }
    }
    String replaced = body.toString()
        .replaceAll("\\bidem_record_(\\w+)", simple + "_$1")
        .replaceAll("\\bidem_record\\b", table);
    List<String> statements = new ArrayList<>();
    for (String s : replaced.split(";\\s*\n")) {
      if (!s.isBlank()) {
        statements.add(s.strip());
      }
    }
    return statements;
  }

  /** Runs the schema file for {@code table} under {@link SchemaLock}. */
  public static void run(Connection c, JdbcDialect dialect, String table) throws SQLException {
    SchemaLock.run(c, dialect, statements(dialect, table));
  }
}
