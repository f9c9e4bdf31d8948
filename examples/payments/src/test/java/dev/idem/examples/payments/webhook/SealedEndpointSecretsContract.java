package dev.idem.examples.payments.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.DecryptionException.Reason;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.examples.payments.DatabaseOfItsOwn;
import dev.idem.examples.payments.PaymentsSchema;
import dev.idem.outbox.webhook.WebhookSecret;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The service's endpoint secrets sealed at rest in {@code pay_webhook_endpoint.secret}: bound to the endpoint id,
 * opened for the transport, and loud (a {@link DecryptionException}) when they do not open. Run on H2, PostgreSQL and
 * MariaDB by the subclasses, each in a database of its own.
 */
abstract class SealedEndpointSecretsContract {
  final Keyring keyring = Keyring.generate("k1");
  final Encryption encryption = Encryption.with(keyring);
  DatabaseOfItsOwn database;
  DataSource ds;
  JdbcWebhookEndpoints endpoints;

  /** A database of the test's own, or null for an in-memory H2 database. */
  abstract DatabaseOfItsOwn database();

  @BeforeEach
  void setUp() {
    database = database();
    if (database == null) {
      ds = new DriverManagerDataSource("jdbc:h2:mem:sealed-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", "sa", "");
    } else {
      String url = argument("--spring.datasource.url=");
      ds = new DriverManagerDataSource(url, argument("--spring.datasource.username="),
          System.getProperty("idem.test.password", ""));
    }
    PaymentsSchema.createIfMissing(ds);
    endpoints = with(encryption);
  }

  @AfterEach
  void dropDatabase() {
    if (database != null) {
      database.close();
    }
  }

  private String argument(String prefix) {
    return database.arguments().stream().filter(a -> a.startsWith(prefix)).findFirst().orElseThrow()
        .substring(prefix.length());
  }

  JdbcWebhookEndpoints with(Encryption encryption) {
    return new JdbcWebhookEndpoints(ds, Clock.systemUTC(), 100, encryption);
  }

  static NewWebhookEndpoint request() {
    return new NewWebhookEndpoint(URI.create("http://127.0.0.1:9/hook"), List.of("*"));
  }

  String rawSecret(String id) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT secret FROM pay_webhook_endpoint WHERE id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  void setRawSecret(String id, String secret) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE pay_webhook_endpoint SET secret = ? WHERE id = ?")) {
      ps.setString(1, secret);
      ps.setString(2, id);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  /** Every column of every endpoint row, as text. */
  String rawTable() throws SQLException {
    StringBuilder all = new StringBuilder();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT * FROM pay_webhook_endpoint");
        ResultSet rs = ps.executeQuery()) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        for (int i = 1; i <= columns; i++) {
          all.append(rs.getString(i)).append('|');
        }
        all.append('\n');
      }
    }
    return all.toString();
  }

  static DecryptionException.Reason reasonOf(Throwable t) {
    assertThat(t).isInstanceOf(DecryptionException.class);
    return ((DecryptionException) t).reason();
  }

  @Test
  void noSecretIsStoredInClearTextAndTheTransportGetsEachOneOpened() throws Exception {
    List<JdbcWebhookEndpoints.Created> created = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      created.add(endpoints.create("tenant-" + (i % 2), request()));
    }

    String table = rawTable();

    for (JdbcWebhookEndpoints.Created c : created) {
      String revealed = c.secret().reveal();
      assertThat(table).doesNotContain(revealed).doesNotContain(revealed.substring(WebhookSecret.PREFIX.length()));
      assertThat(rawSecret(c.endpoint().id())).startsWith(Encryption.TEXT_PREFIX);
      assertThat(endpoints.find(c.endpoint().id()).orElseThrow().secrets()).containsExactly(c.secret());
    }
    assertThat(table).doesNotContain(WebhookSecret.PREFIX);
  }

  @Test
  void aTamperedSecretFailsLoudly() throws Exception {
    String id = endpoints.create("alice", request()).endpoint().id();
    String sealed = rawSecret(id);
    byte[] bytes = Base64.getDecoder().decode(sealed.substring(Encryption.TEXT_PREFIX.length()));
    bytes[bytes.length - 20] ^= 0x01;
    setRawSecret(id, Encryption.TEXT_PREFIX + Base64.getEncoder().encodeToString(bytes));

    Throwable thrown = assertThrows(RuntimeException.class, () -> endpoints.find(id));

    assertThat(reasonOf(thrown)).isEqualTo(Reason.TAMPERED);
  }

  @Test
  void aSecretMovedToAnotherEndpointDoesNotOpen() throws Exception {
    String from = endpoints.create("alice", request()).endpoint().id();
    String to = endpoints.create("alice", request()).endpoint().id();
    setRawSecret(to, rawSecret(from));

    assertThatThrownBy(() -> endpoints.find(to)).isInstanceOfSatisfying(DecryptionException.class,
        e -> assertThat(e.reason()).isEqualTo(Reason.TAMPERED));
    assertThat(endpoints.find(from)).isPresent();
  }

  @Test
  void aKeyringWithoutTheSealingKeyGivesUnknownKey() throws Exception {
    String id = endpoints.create("alice", request()).endpoint().id();

    assertThatThrownBy(() -> with(Encryption.with(Keyring.generate("k9"))).find(id))
        .isInstanceOfSatisfying(DecryptionException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY);
          assertThat(e.keyId()).isEqualTo("k1");
        });
    assertThatThrownBy(() -> with(null).find(id)).isInstanceOfSatisfying(DecryptionException.class,
        e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY));
  }

  @Test
  void secretsStoredBeforeEncryptionStillSign() throws Exception {
    JdbcWebhookEndpoints.Created old = with(null).create("alice", request());

    assertThat(rawSecret(old.endpoint().id())).isEqualTo(old.secret().reveal());
    assertThat(endpoints.find(old.endpoint().id()).orElseThrow().secrets()).containsExactly(old.secret());
  }

  @Test
  void afterRotationOldSecretsOpenAndNewOnesUseTheNewKey() throws Exception {
    JdbcWebhookEndpoints.Created before = endpoints.create("alice", request());
    JdbcWebhookEndpoints rotated = with(Encryption.with(keyring.withNewKey("k2")));

    JdbcWebhookEndpoints.Created after = rotated.create("alice", request());

    assertThat(Encryption.keyIdOf(rawSecret(before.endpoint().id()))).isEqualTo("k1");
    assertThat(Encryption.keyIdOf(rawSecret(after.endpoint().id()))).isEqualTo("k2");
    assertThat(rotated.find(before.endpoint().id()).orElseThrow().secrets()).containsExactly(before.secret());
    assertThat(rotated.find(after.endpoint().id()).orElseThrow().secrets()).containsExactly(after.secret());
  }
}
