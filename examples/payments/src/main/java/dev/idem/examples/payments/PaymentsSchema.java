package dev.idem.examples.payments;

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
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The example's tables, created at startup if missing from {@code db/payments/<dialect>/schema.sql} (H2, PostgreSQL
 * or MariaDB, told apart by the database's product name). Every statement is {@code CREATE ... IF NOT EXISTS} or
 * {@code ALTER TABLE ... ADD COLUMN IF NOT EXISTS}, so running it again changes nothing and an older database gains
 * the new columns.
 */
public final class PaymentsSchema {
  private static final Logger LOG = LoggerFactory.getLogger(PaymentsSchema.class);

  private final JdbcDialect dialect;

  private PaymentsSchema(JdbcDialect dialect) {
    this.dialect = dialect;
  }

  /** Creates what is missing and returns the schema's dialect. */
  public static PaymentsSchema createIfMissing(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      JdbcDialect dialect = JdbcDialect.fromProductName(c.getMetaData().getDatabaseProductName());
      String resource = "db/payments/" + dialect.resourceFolder() + "/schema.sql";
      // under the schema lock: instances starting together on a fresh database would race on IF NOT EXISTS
      SchemaLock.run(c, dialect, statements(read(resource)));
      LOG.info("payments schema ready ({}, {})", dialect, resource);
      return new PaymentsSchema(dialect);
    } catch (SQLException e) {
      throw new IllegalStateException("creating the payments tables failed (SQLState " + e.getSQLState() + "): "
          + e.getMessage(), e);
    }
  }

  public JdbcDialect dialect() {
    return dialect;
  }

  private static String read(String resource) {
    try (InputStream in = PaymentsSchema.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("schema file " + resource + " is missing from the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The script's statements: comment lines dropped, split at semicolons that end a line. */
  static List<String> statements(String script) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : script.split("\n")) {
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("--")) {
        continue;
      }
      current.append(line).append('\n');
      if (trimmed.endsWith(";")) {
        String statement = current.toString().strip();
        out.add(statement.substring(0, statement.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) {
      out.add(current.toString().strip());
    }
    return out;
  }
}
