package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.internal.SchemaScript;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The record table's schema files as the store runs them: the retired index on {@code expires_at} is never created
 * and is dropped from a table that has it, in the table's own schema, and nowhere else.
 */
class RecordSchemaScriptTest {

  @Test
  void theRetiredIndexIsDroppedInTheTablesOwnSchema() {
    List<String> qualified = SchemaScript.RECORD.statements(JdbcDialect.POSTGRESQL, "app.idem_x");
    List<String> plain = SchemaScript.RECORD.statements(JdbcDialect.H2, "idem_x");

    assertThat(qualified).contains("DROP INDEX CONCURRENTLY IF EXISTS app.idem_x_expires_at")
        .noneMatch(s -> s.startsWith("CREATE INDEX") && s.contains("expires_at ON"));
    assertThat(plain).contains("DROP INDEX IF EXISTS idem_x_expires_at");
    assertThat(SchemaScript.RECORD.statements(JdbcDialect.MARIADB, "idem_x"))
        .contains("DROP INDEX IF EXISTS idem_x_expires_at ON idem_x");
  }

  @Test
  void onPostgresAnOlderTableLosesTheIndexAndAnotherSchemasTableKeepsItsOwn() throws SQLException {
    DataSource pool = Databases.pool(JdbcDialect.POSTGRESQL);
    String schema = "idem_v6_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      try {
        // two tables as an older version left them, with the index: one in the new schema, one of the same name
        // in another schema
        st.execute("CREATE SCHEMA " + schema + "_other");
        for (String table : List.of(schema + ".idem_v6", schema + "_other.idem_v6")) {
          SchemaScript.RECORD.run(c, JdbcDialect.POSTGRESQL, table);
          st.execute("CREATE INDEX idem_v6_expires_at ON " + table + " (expires_at)");
        }

        SchemaScript.RECORD.run(c, JdbcDialect.POSTGRESQL, schema + ".idem_v6");

        assertThat(indexes(st, schema)).contains("idem_v6_purge_at").doesNotContain("idem_v6_expires_at");
        assertThat(indexes(st, schema + "_other")).contains("idem_v6_expires_at");
      } finally {
        st.execute("DROP SCHEMA " + schema + " CASCADE");
        st.execute("DROP SCHEMA IF EXISTS " + schema + "_other CASCADE");
      }
    }
  }

  private static List<String> indexes(Statement st, String schema) throws SQLException {
    try (ResultSet rs = st.executeQuery("SELECT indexname FROM pg_indexes WHERE schemaname = '" + schema + "'")) {
      List<String> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getString(1));
      }
      return out;
    }
  }
}
