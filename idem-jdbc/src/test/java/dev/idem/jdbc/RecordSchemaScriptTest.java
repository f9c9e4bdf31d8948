package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.jdbc.internal.SchemaScript;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
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
 * and is dropped from a table that has it, in the table's own schema, and nowhere else; a schema-qualified table gets
 * its side tables (the audit) in its own schema too.
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

  @Test
  void aSchemaQualifiedNameKeepsItsSideTablesInItsSchemaAndNamesIndexesPlainly() {
    for (JdbcDialect dialect : List.of(JdbcDialect.POSTGRESQL, JdbcDialect.MARIADB, JdbcDialect.H2)) {
      assertThat(SchemaScript.RECORD.statements(dialect, "app.idem_x")).as("%s", dialect)
          .anyMatch(s -> s.startsWith("CREATE TABLE IF NOT EXISTS app.idem_x_audit ("))
          .anyMatch(s -> s.contains("CONSTRAINT idem_x_audit_pk PRIMARY KEY"))
          .anyMatch(s -> s.startsWith("ALTER TABLE app.idem_x ADD COLUMN IF NOT EXISTS resume_attempts"))
          .noneMatch(s -> s.contains("TABLE IF NOT EXISTS idem_x") || s.contains("app.app."));
      assertThat(SchemaScript.OUTBOX.statements(dialect, "app.ob")).as("%s", dialect)
          .anyMatch(s -> s.startsWith("CREATE TABLE IF NOT EXISTS app.ob_attempt (")
              && s.contains("CONSTRAINT ob_attempt_event FOREIGN KEY (event_seq) REFERENCES app.ob (seq)"))
          .noneMatch(s -> s.contains("TABLE IF NOT EXISTS ob_"));
    }
    assertThat(SchemaScript.RECORD.statements(JdbcDialect.MARIADB, "app.idem_x"))
        .contains("DROP INDEX IF EXISTS idem_x_expires_at ON app.idem_x");
    assertThat(SchemaScript.RECORD.statements(JdbcDialect.H2, "app.idem_x"))
        .contains("DROP INDEX IF EXISTS app.idem_x_expires_at");
    assertThat(SchemaScript.RECORD_PARTITIONED.statements(JdbcDialect.POSTGRESQL, "app.idem_x"))
        .anyMatch(s -> s.startsWith("CREATE TABLE IF NOT EXISTS app.idem_x_audit ("));
    // a table whose own name starts like the default one is renamed once, not twice
    assertThat(SchemaScript.RECORD.statements(JdbcDialect.POSTGRESQL, "app.idem_record_v2"))
        .anyMatch(s -> s.startsWith("CREATE TABLE IF NOT EXISTS app.idem_record_v2_audit ("))
        .anyMatch(s -> s.startsWith("CREATE INDEX IF NOT EXISTS idem_record_v2_purge_at ON app.idem_record_v2 "));
  }

  @Test
  void onPostgresAStoreInASchemaOffTheSearchPathCreatesAndUsesItsAuditThere() throws Exception {
    DataSource pool = Databases.pool(JdbcDialect.POSTGRESQL);
    String id = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    String schema = "idem_sq_" + id;
    String table = schema + ".rec_" + id;
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      try {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pool).name("schema-qualified").table(table)
            .createSchemaIfMissing(true).build();
        store.checkSchema();

        assertThat(tables(st, schema)).containsExactlyInAnyOrder("rec_" + id, "rec_" + id + "_audit");
        assertThat(tables(st, "public")).noneMatch(t -> t.startsWith("rec_" + id));
        assertResolvable(store);
      } finally {
        st.execute("DROP SCHEMA " + schema + " CASCADE");
        st.execute("DROP TABLE IF EXISTS public.rec_" + id + "_audit"); // where a wrong schema file would put it
      }
    }
  }

  @Test
  void onPostgresTheStartUpCheckFindsAMissingAuditTable() throws Exception {
    DataSource pool = Databases.pool(JdbcDialect.POSTGRESQL);
    String schema = "idem_sq_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      try {
        SchemaScript.RECORD.run(c, JdbcDialect.POSTGRESQL, schema + ".idem_sq");
        st.execute("DROP TABLE " + schema + ".idem_sq_audit");

        Throwable e = catchThrowableOfType(() -> JdbcIdempotencyStore.builder(pool).table(schema + ".idem_sq")
            .build(), IllegalStateException.class);

        assertThat(e).hasMessageContaining("the audit table " + schema + ".idem_sq_audit is missing");
      } finally {
        st.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }

  @Test
  void onMariaDbAStoreInAnotherDatabaseCreatesAndUsesItsAuditThereAndStartsAgain() throws Exception {
    DataSource pool = Databases.pool(JdbcDialect.MARIADB);
    String id = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    String database = "idem_sq_" + id;
    String table = database + ".rec_" + id;
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE IF NOT EXISTS " + database);
      try {
        JdbcIdempotencyStore.builder(pool).name("schema-qualified").table(table).createSchemaIfMissing(true).build();
        // a second start runs every schema file again, V6's DROP INDEX among them
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pool).name("schema-qualified").table(table)
            .createSchemaIfMissing(true).build();
        store.checkSchema();

        assertThat(mariaDbTables(st, database)).containsExactlyInAnyOrder("rec_" + id, "rec_" + id + "_audit");
        assertThat(mariaDbTables(st, c.getCatalog())).noneMatch(t -> t.startsWith("rec_" + id));
        assertResolvable(store);
      } finally {
        st.execute("DROP DATABASE IF EXISTS " + database);
        st.execute("DROP TABLE IF EXISTS rec_" + id + "_audit"); // where a wrong schema file would put it
      }
    }
  }

  @Test
  void onH2AStoreInAnotherSchemaCreatesAndUsesItsAuditThere() throws Exception {
    DataSource pool = Databases.pool(JdbcDialect.H2);
    String id = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    String schema = "idem_sq_" + id;
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      try {
        JdbcIdempotencyStore.builder(pool).table(schema + ".rec_" + id).createSchemaIfMissing(true).build();
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pool).name("schema-qualified")
            .table(schema + ".rec_" + id).createSchemaIfMissing(true).build();
        store.checkSchema();

        assertThat(names(st, "SELECT LOWER(table_name) FROM information_schema.tables WHERE LOWER(table_schema) = '"
            + schema + "'")).containsExactlyInAnyOrder("rec_" + id, "rec_" + id + "_audit");
        assertResolvable(store);
      } finally {
        st.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }

  /** An uncertain record resolves, and its audit entry reads back. */
  private static void assertResolvable(JdbcIdempotencyStore store) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    RecordKey key = RecordKey.of("tenant", "POST /payments", "k-" + UUID.randomUUID());
    IdempotencyRecord uncertain = new IdempotencyRecord(key, RecordState.IN_PROGRESS,
        Fingerprint.ofHash("f".repeat(64)), null, "create", Checkpoint.empty(), "worker-1", now, 1, now, now,
        now.plus(Duration.ofDays(1)))
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, now);
    assertThat(uncertain.state()).isEqualTo(RecordState.UNCERTAIN);
    store.inTransaction(tx -> store.insert(tx, uncertain));

    AuditEntry entry = store.admin().resolve(key, uncertain.version(),
        Resolution.fail(StoredResponse.of(409, "{}"), "operator", "checked by hand", now)).orElseThrow();

    assertThat(store.find(key).orElseThrow().state()).isEqualTo(RecordState.FAILED);
    assertThat(store.admin().history(key)).containsExactly(entry);
  }

  private static List<String> tables(Statement st, String schema) throws SQLException {
    return names(st, "SELECT tablename FROM pg_tables WHERE schemaname = '" + schema + "'");
  }

  private static List<String> mariaDbTables(Statement st, String database) throws SQLException {
    return names(st, "SELECT table_name FROM information_schema.tables WHERE table_schema = '" + database + "'");
  }

  private static List<String> names(Statement st, String query) throws SQLException {
    try (ResultSet rs = st.executeQuery(query)) {
      List<String> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getString(1));
      }
      return out;
    }
  }
}
