package dev.idem.examples.payments.security;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.DatabaseOfItsOwn;
import dev.idem.examples.payments.RunningService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference service keeps its answers sealed at rest by default: after payments (one of them declined) and
 * refunds whose descriptions carry a card-like number, every kept answer in {@code idem_record} is an envelope, no
 * column of the record table holds the number or an answer's text, and replays still give the answers byte for byte,
 * after a restart too (the keyring file created on first start under the data folder is read again). A sealed answer
 * flipped in the database, or read under a keyring without its key, is refused with {@code INTERNAL.record_unreadable}
 * (500, not retryable), counted in {@code idem_records_unreadable_total}, and never charged again. On H2 and
 * PostgreSQL.
 */
class SealedAnswersTest {
  private static final Caller ALICE = new Caller("sk_live_alice_" + UUID.randomUUID(), "alice");

  @TempDir
  Path data;

  @Test
  void onH2() throws Exception {
    run(List.of("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments")
        + ";WRITE_DELAY=0;AUTO_SERVER=FALSE"));
  }

  @Test
  void onPostgres() throws Exception {
    try (DatabaseOfItsOwn database = DatabaseOfItsOwn.postgres()) {
      run(database.arguments());
    }
  }

  private void run(List<String> database) throws Exception {
    String card = "4242424242424242";
    String account = "acct_" + UUID.randomUUID().toString().substring(0, 8);
    Path keyringFile = data.resolve("keyring");
    List<String> args = new ArrayList<>(database);
    args.addAll(List.of(ALICE.argument(), "--idem.encryption.keyring-file=" + keyringFile));
    List<String[]> kept = new ArrayList<>();
    long charges;

    try (RunningService service = RunningService.start(args.toArray(String[]::new))) {
      for (int i = 0; i < 6; i++) {
        String key = UUID.randomUUID().toString();
        String body = "{\"account_id\":\"" + account + "\",\"amount\":" + (1000 + i) + ",\"currency\":\"EUR\","
            + "\"description\":\"card " + card + " order " + i + "\"}";
        Answer first = service.post("/payments", ALICE.apiKey(), key, body);
        assertThat(first.status()).as(first.toString()).isEqualTo(201);
        kept.add(new String[] {key, body, first.text()});
      }
      String declined = UUID.randomUUID().toString();
      String declinedBody = "{\"account_id\":\"acct_declined_x\",\"amount\":50,\"currency\":\"EUR\","
          + "\"description\":\"card " + card + "\"}";
      Answer refused = service.post("/payments", ALICE.apiKey(), declined, declinedBody);
      assertThat(refused.status()).as(refused.toString()).isEqualTo(402);
      kept.add(new String[] {declined, declinedBody, refused.text()});

      List<byte[]> bodies = columnBytes(service, "SELECT response_body FROM idem_record WHERE response_body IS NOT"
          + " NULL");
      assertThat(bodies).hasSizeGreaterThanOrEqualTo(kept.size());
      for (byte[] body : bodies) {
        assertThat(Encryption.isSealed(body)).as("a kept answer is an envelope").isTrue();
        assertThat(new String(body, UTF_8)).doesNotContain(card, "\"id\"", account);
      }
      List<SecretScan.Finding> findings = SecretScan.scanTables(service.dataSource(),
          Set.of(card, account)).stream().filter(f -> f.column().startsWith("idem_record.")).toList();
      assertThat(findings).as("the card number or the account in the record table").isEmpty();
      assertThat(Files.readString(keyringFile)).doesNotContain(card);
    }

    try (RunningService again = RunningService.start(args.toArray(String[]::new))) {
      for (String[] k : kept) {
        Answer replay = again.post("/payments", ALICE.apiKey(), k[0], k[1]);
        assertThat(replay.header("Idempotency-Status")).as(replay.toString()).isEqualTo("replayed");
        assertThat(replay.text()).isEqualTo(k[2]);
      }
      charges = again.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", account);

      byte[] sealed = columnBytes(again, "SELECT response_body FROM idem_record WHERE idem_key = ?",
          kept.get(0)[0]).get(0);
      sealed[sealed.length - 1] ^= 0x01;
      update(again, "UPDATE idem_record SET response_body = ? WHERE idem_key = ?", sealed, kept.get(0)[0]);
      for (int i = 0; i < 2; i++) {
        Answer tampered = again.post("/payments", ALICE.apiKey(), kept.get(0)[0], kept.get(0)[1]);
        assertThat(tampered.status()).as(tampered.toString()).isEqualTo(500);
        assertThat(tampered.code()).isEqualTo("INTERNAL.record_unreadable");
        assertThat(tampered.json().path("retryable").asBoolean()).isFalse();
        assertThat(tampered.text()).doesNotContain(card);
      }
      assertThat(again.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", account))
          .as("nothing was charged again").isEqualTo(charges);
      assertThat(again.get("/actuator/prometheus", null).text())
          .containsPattern("idem_records_unreadable_total\\{[^}]*reason=\"tampered\"[^}]*} 2\\.0");
    }

    List<String> otherKeys = new ArrayList<>(database);
    otherKeys.addAll(List.of(ALICE.argument(), "--idem.encryption.keyring=" + keyringText(Keyring.generate("k9"))));
    try (RunningService stranger = RunningService.start(otherKeys.toArray(String[]::new))) {
      Answer unknown = stranger.post("/payments", ALICE.apiKey(), kept.get(1)[0], kept.get(1)[1]);
      assertThat(unknown.status()).as(unknown.toString()).isEqualTo(500);
      assertThat(unknown.code()).isEqualTo("INTERNAL.record_unreadable");
      assertThat(stranger.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", account))
          .isEqualTo(charges);
    }
  }

  private static String keyringText(Keyring keyring) throws Exception {
    Path file = Files.createTempFile("keyring", ".txt");
    Files.delete(file);
    keyring.write(file);
    try {
      return Files.readString(file).lines().filter(l -> !l.startsWith("#")).findFirst().orElseThrow();
    } finally {
      Files.delete(file);
    }
  }

  private static List<byte[]> columnBytes(RunningService service, String sql, Object... params) throws Exception {
    List<byte[]> values = new ArrayList<>();
    try (Connection c = service.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          values.add(rs.getBytes(1));
        }
      }
    }
    return values;
  }

  private static void update(RunningService service, String sql, Object... params) throws Exception {
    try (Connection c = service.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }
}
