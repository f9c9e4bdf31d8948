package dev.idem.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code idem keys}: a rotation end to end on a record table (H2 and PostgreSQL): answers sealed under k1, a key added
 * in front of the keyring file, reseal, then k1 retired: every answer still opens, under the new key. Bad options
 * exit 2.
 */
class KeysCommandTest {
  @TempDir
  Path dir;

  @Test
  void rotatesOnH2() throws Exception {
    rotate("jdbc:h2:mem:keys-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa");
  }

  @Test
  void rotatesOnPostgres() throws Exception {
    rotate(System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test"), "postgres");
  }

  private void rotate(String url, String user) throws Exception {
    String table = "idem_keys_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    String db = url + (url.startsWith("jdbc:h2") ? ";USER=" + user : (url.contains("?") ? "&" : "?") + "user=" + user);
    Path keyring = dir.resolve("keyring");
    assertThat(keys("add", "--keyring", keyring.toString(), "--id", "k1").status).isZero();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setMaximumPoolSize(4);
    try (HikariDataSource dataSource = new HikariDataSource(config)) {
      JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).table(table).createSchemaIfMissing(true)
          .build();
      try {
        EncryptedIdempotencyStore before = sealing(store, Keyring.load(keyring));
        Scope scope = Scope.of("keys-" + UUID.randomUUID());
        for (int i = 0; i < 30; i++) {
          IdempotencyRecord record = completed(scope, "k-" + i);
          assertThat(before.<Boolean>inTransaction(tx -> before.insert(tx, record))).isTrue();
        }

        Result added = keys("add", "--keyring", keyring.toString());
        Result resealed = keys("reseal", "--keyring", keyring.toString(), "--db", db, "--table", table, "--batch",
            "7");
        Result retired = keys("retire", "--keyring", keyring.toString(), "--id", "k1");

        assertThat(added.status).as(added.err).isZero();
        String k2 = Keyring.load(keyring).currentKeyId();
        assertThat(k2).as("a time-stamped id, never a retired one again").matches("k\\d{14}");
        assertThat(added.out).contains("[" + k2 + ", k1]");
        assertThat(resealed.status).as(resealed.err).isZero();
        assertThat(resealed.out).contains("30 re-sealed", "0 unreadable");
        assertThat(retired.status).as(retired.err).isZero();
        assertThat(Keyring.load(keyring).keyIds()).containsExactly(k2);
        EncryptedIdempotencyStore after = sealing(store, Keyring.load(keyring));
        for (int i = 0; i < 30; i++) {
          RecordKey key = key(scope, "k-" + i);
          assertThat(Encryption.keyIdOf(store.find(key).orElseThrow().response().body())).isEqualTo(k2);
          assertThat(after.find(key).orElseThrow().response().bodyAsString()).isEqualTo("{\"n\":\"k-" + i + "\"}");
        }
      } finally {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
          st.execute("DROP TABLE " + table);
        }
      }
    }
  }

  @Test
  void badOptionsExitWithTheUsage() throws Exception {
    assertThat(keys().status).isEqualTo(Main.USAGE);
    assertThat(keys("spin").status).isEqualTo(Main.USAGE);
    assertThat(keys("add").status).isEqualTo(Main.USAGE);
    assertThat(keys("reseal", "--keyring", "x", "--batch", "0").status).isIn(Main.USAGE, Main.FAILED);
    assertThat(keys("retire", "--keyring", dir.resolve("k").toString()).status).isEqualTo(Main.USAGE);
    Path keyring = dir.resolve("keyring");
    keys("add", "--keyring", keyring.toString(), "--id", "only");
    Result current = keys("retire", "--keyring", keyring.toString(), "--id", "only");
    assertThat(current.status).isEqualTo(Main.FAILED);
    assertThat(current.err).contains("current key");
    assertThat(Files.readString(keyring)).contains("only:");
  }

  @Test
  void aDatabaseThatCannotBeReachedIsReportedWithoutItsPassword() throws Exception {
    Path keyring = dir.resolve("keyring-secret");
    keys("add", "--keyring", keyring.toString(), "--id", "k1");
    for (String db : List.of("jdbc:nosuch://db.invalid/x?user=u&password=s3cret",
        "jdbc:nosuch://u:s3cret@db.invalid/x")) {
      Result failed = keys("reseal", "--keyring", keyring.toString(), "--db", db);

      assertThat(failed.status).as(failed.err).isEqualTo(Main.FAILED);
      assertThat(failed.err).startsWith("idem keys: ").doesNotContain("s3cret");
    }
  }

  private static EncryptedIdempotencyStore sealing(IdempotencyStore store, Keyring keyring) {
    return EncryptedIdempotencyStore.wrap(store, Encryption.with(keyring), IdemListener.NOOP);
  }

  private static RecordKey key(Scope scope, String key) {
    return new RecordKey(scope, Operation.of("POST /keys"), IdempotencyKey.of(key));
  }

  private static IdempotencyRecord completed(Scope scope, String key) {
    return IdempotencyRecord.finished(key(scope, key), Fingerprint.ofHash("a".repeat(64)),
        StoredResponse.json(201, "{\"n\":\"" + key + "\"}"), RecordState.COMPLETED, Instant.now(),
        Duration.ofHours(1));
  }

  private record Result(int status, String out, String err) {}

  private static Result keys(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = new KeysCommand().run(List.of(args), new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8));
    return new Result(status, out.toString(UTF_8), err.toString(UTF_8));
  }
}
