package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.client.TestServer.Reply;
import dev.idem.client.spi.PendingJournal;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The journal contract plus JDBC-specific behaviour, on one database. Each test uses its own table (random suffix),
 * dropped afterwards, so that reruns and concurrent runs on the shared servers do not see each other's rows.
 * A database that cannot be reached fails the test; it never skips.
 */
abstract class JdbcJournalContractTest extends PendingJournalContractTest {
  private final ClientFixture fixture = new ClientFixture();
  final String table = "idem_client_intent_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

  /** The shared pool of this database. */
  abstract DataSource dataSource();

  abstract JdbcJournal.Dialect expectedDialect();

  /** A second, independent pool on the same database (as another process would have). Closed by the test. */
  abstract HikariDataSource newPool();

  static HikariDataSource pool(String url, String user, String poolName) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(10);
    config.setConnectionTimeout(10_000);
    config.setPoolName(poolName);
    try {
      return new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new IllegalStateException("database not reachable at " + url + " as " + user + ". Start it and run the"
          + " tests again; tests that need a database never skip.", e);
    }
  }

  JdbcJournal.Builder builder(DataSource ds) {
    return JdbcJournal.builder(ds).name("test-journal").table(table).createSchemaIfMissing(true);
  }

  @Override
  PendingJournal open() {
    dropTable();
    return builder(dataSource()).build();
  }

  @Override
  PendingJournal reopen() {
    return builder(dataSource()).build();
  }

  @AfterEach
  void dropTable() {
    dropTable(dataSource(), table);
  }

  static void dropTable(DataSource dataSource, String table) {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void dialectIsDetectedAndDefaultsAreDocumented() {
    try (JdbcJournal journal = JdbcJournal.builder(dataSource()).build()) {
      assertThat(journal.dialect()).isEqualTo(expectedDialect());
      assertThat(journal.table()).isEqualTo("idem_client_intent");
      assertThat(journal.maxRecordBytes()).isEqualTo(FileJournal.MAX_RECORD_BYTES);
    }
  }

  @Test
  void aNewInstanceOnAnotherPoolSeesThePendingIntents() {
    try (JdbcJournal journal = (JdbcJournal) open()) {
      journal.append(intent("k1", "{\"a\":1}"));
      journal.append(intent("k2", "{\"a\":2}"));
    }
    try (HikariDataSource other = newPool(); JdbcJournal second = builder(other).name("second").build()) {
      assertThat(second.pending()).hasSize(2);
      assertSameIntent(second.pending().get(0), intent("k1", "{\"a\":1}"));
      assertSameIntent(second.pending().get(1), intent("k2", "{\"a\":2}"));
      second.complete("k1");
    }
    try (JdbcJournal journal = (JdbcJournal) reopen()) {
      assertThat(journal.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k2");
    }
  }

  @Test
  void secretHeadersAreStrippedAgainAndNeverStored() throws SQLException {
    Intent intent = intent("k-secret", "{\"a\":1}")
        .withHeader("Authorization", "Bearer secret-token-2")
        .withHeader("cookie", "session=secret-cookie-3")
        .withHeader("PROXY-AUTHORIZATION", "Basic secret-proxy-4")
        .withHeader("X-Trace", "visible-5");
    try (JdbcJournal journal = (JdbcJournal) open()) {
      journal.append(intent);

      assertThat(journal.pending()).singleElement().satisfies(i -> assertThat(i.headers())
          .extracting(h -> h.getKey().toLowerCase(Locale.ROOT))
          .containsExactly("content-type", "x-tenant", "x-trace"));
    }
    try (Connection c = dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT idem_key, method, uri, headers, body FROM " + table);
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      StringBuilder row = new StringBuilder();
      for (int col = 1; col <= 4; col++) {
        row.append(rs.getString(col)).append('|');
      }
      row.append(new String(rs.getBytes(5), StandardCharsets.UTF_8));
      assertThat(row.toString()).contains("k-secret", "visible-5", "{\"a\":1}", "X-Tenant: t-\u00fc")
          .doesNotContain("secret-token-2", "secret-cookie-3", "secret-proxy-4")
          .doesNotContainIgnoringCase("authorization").doesNotContainIgnoringCase("cookie");
      assertThat(rs.next()).isFalse();
    }
  }

  @Test
  void clientResumesPendingIntentsWithTheOriginalKey() throws IOException {
    String originalKey;
    try (TestServer server = new TestServer(Reply.disconnect())) {
      try (JdbcJournal journal = (JdbcJournal) open()) {
        IdempotentHttpClient client = fixture.builder().journal(journal).build();
        IntentPendingException pending = org.junit.jupiter.api.Assertions.assertThrows(
            IntentPendingException.class,
            () -> client.send(Intent.post(server.uri("/pay"), bytes("{\"amount\":7}"))
                .withHeader("Authorization", "Bearer old")));
        originalKey = pending.key().orElseThrow();
        assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), bytes("{\"amount\":8}"))
            .withKey("caller-8"))).isInstanceOf(IntentPendingException.class);
      }
      server.received.clear();
      server.script(Reply.status(201));

      try (HikariDataSource other = newPool(); JdbcJournal journal = builder(other).build()) {
        IdempotentHttpClient client = fixture.builder()
            .journal(journal)
            .headers(() -> Map.of("Authorization", "Bearer fresh"))
            .build();
        assertThat(journal.pending()).hasSize(2);

        List<Resumed> resumed = client.resumePending();

        assertThat(resumed).allSatisfy(r -> assertThat(r.isCompleted()).isTrue());
        assertThat(resumed).extracting(r -> r.response().orElseThrow().status()).containsExactly(201, 201);
        assertThat(server.headerValues("Idempotency-Key")).containsExactly(originalKey, "caller-8");
        assertThat(server.received).extracting(TestServer.Received::bodyText)
            .containsExactly("{\"amount\":7}", "{\"amount\":8}");
        assertThat(server.headerValues("Authorization")).containsOnly("Bearer fresh");
        assertThat(journal.pending()).isEmpty();
      }
    }
  }

  @Test
  void sameKeyForADifferentIntentIsRefusedWithAClearMessage() {
    try (JdbcJournal journal = (JdbcJournal) open()) {
      journal.append(intent("k1", "{\"a\":1}"));

      assertThatThrownBy(() -> journal.append(intent("k1", "{\"a\":2}")))
          .isInstanceOf(JournalException.class)
          .hasMessageContaining("test-journal")
          .hasMessageContaining("key k1 is already pending for a different intent");
      journal.append(intent("k1", "{\"a\":1}"));

      assertThat(journal.pending()).singleElement().satisfies(i -> assertSameIntent(i, intent("k1", "{\"a\":1}")));
    }
  }

  @Test
  void keysDifferingOnlyInCaseAreDifferentIntents() {
    try (JdbcJournal journal = (JdbcJournal) open()) {
      journal.append(intent("key-a", "{\"a\":1}"));
      journal.append(intent("KEY-A", "{\"a\":2}"));
      journal.complete("Key-A");

      assertThat(journal.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("key-a", "KEY-A");
    }
  }

  @Test
  void oversizedRecordIsRefusedWithTheFileJournalsException() {
    try (JdbcJournal journal = builder(dataSource()).maxRecordBytes(1024).build()) {
      assertThatThrownBy(() -> journal.append(intent("k1", "x".repeat(2000))))
          .isInstanceOf(JournalException.class)
          .hasMessageContaining("maxRecordBytes 1024");
      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void defaultLimitAcceptsWhatFileJournalAccepts() {
    byte[] big = new byte[FileJournal.MAX_RECORD_BYTES - 512];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 31);
    }
    Intent intent = Intent.post(URI.create("http://127.0.0.1:1/big"), big).withKey("k-big");
    try (JdbcJournal journal = (JdbcJournal) open()) {
      journal.append(intent);
      assertSameIntent(journal.pending().get(0), intent);
      assertThatThrownBy(() -> journal.append(
          Intent.post(URI.create("http://127.0.0.1:1/big"), new byte[FileJournal.MAX_RECORD_BYTES]).withKey("k2")))
          .isInstanceOf(JournalException.class).hasMessageContaining("maxRecordBytes " + FileJournal.MAX_RECORD_BYTES);
    }
  }

  @Test
  void intentWithoutKeyCannotBeJournaled() {
    try (JdbcJournal journal = (JdbcJournal) open()) {
      Intent keyless = Intent.post(URI.create("http://127.0.0.1:1/p"), new byte[0]);

      assertThatThrownBy(() -> journal.append(keyless)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void nonAsciiHeadersAndBinaryBodiesSurvive() {
    byte[] binary = new byte[256];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) i;
    }
    Intent intent = Intent.put(URI.create("https://example.test/a%20b?q=\u00e9"), binary)
        .withHeader("X-Name", "J\u00fcrgen \u2603: colon")
        .withHeader("X-Empty", "")
        .withHeader("X-Spaces", "  leading")
        .withKey("k-bin");
    Intent empty = Intent.delete(URI.create("https://example.test/x")).withKey("k-empty");
    try (JdbcJournal journal = (JdbcJournal) open()) {
      journal.append(intent);
      journal.append(empty);
    }
    try (JdbcJournal reopened = (JdbcJournal) reopen()) {
      assertSameIntent(reopened.pending().get(0), intent);
      assertSameIntent(reopened.pending().get(1), empty);
    }
  }

  @Test
  void sqlFailuresNameTheJournalTheStatementAndTheSqlState() {
    try (JdbcJournal journal = JdbcJournal.builder(dataSource()).name("no-table").table(table + "_missing").build()) {
      assertThatThrownBy(() -> journal.append(intent("k1", "{}")))
          .isInstanceOf(JournalException.class)
          .hasMessageContaining("no-table")
          .hasMessageContaining("INSERT INTO " + table + "_missing")
          .hasMessageContaining("SQLState 42")
          .hasCauseInstanceOf(SQLException.class);
      assertThatThrownBy(journal::pending)
          .isInstanceOf(JournalException.class)
          .hasMessageContaining("SELECT idem_key");
    }
  }

  @Test
  void tableNameMustBeAnSqlIdentifier() {
    JdbcJournal.Builder b = JdbcJournal.builder(dataSource());
    for (String bad : List.of("", "1abc", "t; DROP TABLE x", "a.b.c", "t-1", "\"t\"")) {
      assertThatThrownBy(() -> b.table(bad)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("SQL identifier");
    }
    b.table("schema_1.Table_2");
  }

  @Test
  void closedJournalRefusesWork() {
    JdbcJournal journal = (JdbcJournal) open();
    journal.close();
    assertThatThrownBy(journal::pending).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
