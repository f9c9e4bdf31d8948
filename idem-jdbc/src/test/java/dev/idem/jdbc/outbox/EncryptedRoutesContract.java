package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.DecryptionException.Reason;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import dev.idem.test.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Encrypted routes on a real database: payloads of the routes given to {@code Outbox.Builder.encryption} are stored
 * sealed, sent opened, listed opened, and a payload that does not open (tampered with, moved, an unknown key) is dead
 * at once and never sent. Run against PostgreSQL, MariaDB and H2 by the subclasses.
 */
abstract class EncryptedRoutesContract {
  static final String CARD = "4242424242424242";

  final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  final Keyring keyring = Keyring.generate("k1");
  final RecordingTransport sink = new RecordingTransport();
  final List<DecryptionException> unopened = Collections.synchronizedList(new ArrayList<>());
  HikariDataSource ds;
  JdbcOutboxStore store;

  abstract JdbcDialect dialect();

  @BeforeEach
  void setUp() {
    ds = Databases.pool(dialect());
    String suffix = dialect().name().substring(0, 2).toLowerCase();
    String table = Databases.freshTables(dialect(), "obx_seal_" + suffix, "ibx_seal_" + suffix);
    store = JdbcOutboxStore.builder(ds).table(table).build();
  }

  Outbox outbox(Keyring keys) {
    return Outbox.builder(store).clock(clock).encryption(Encryption.with(keys), Set.of("sink")).build();
  }

  OutboxRelay relay(Outbox outbox) {
    return OutboxRelay.builder(outbox).name("seal").route("sink", sink, 3).route("plain", sink, 3)
        .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(1), Jitter.NONE))
        .listener(new OutboxListener() {
          @Override
          public void decryptionFailed(String relay, OutboxMessage message, DecryptionException error) {
            unopened.add(error);
          }
        }).build();
  }

  static OutboxEvent event(String destination, String marker) {
    return OutboxEvent.builder("payment.succeeded").aggregate("payment", marker)
        .payload("{\"marker\":\"" + marker + "\",\"card\":\"" + CARD + "\"}").header("x-marker", "h-" + marker)
        .destination(destination).build();
  }

  void enqueue(Outbox outbox, OutboxEvent... events) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(JdbcTransaction.of(c), List.of(events));
      c.commit();
    }
  }

  /** The raw payload column of every row, by event id. */
  Map<UUID, String> rawPayloads() throws SQLException {
    Map<UUID, String> out = new LinkedHashMap<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT id, payload FROM " + store.table() + " ORDER BY seq");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.put(UUID.fromString(rs.getString(1)), rs.getString(2));
      }
    }
    return out;
  }

  void setRawPayload(UUID id, String payload) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE " + store.table() + " SET payload = ? WHERE id = ?")) {
      ps.setString(1, payload);
      ps.setString(2, id.toString());
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  /** The sealed text with one byte of its ciphertext flipped, still well-formed base64. */
  static String flipOneByte(String sealed) {
    byte[] bytes = Base64.getDecoder().decode(sealed.substring(Encryption.TEXT_PREFIX.length()));
    bytes[bytes.length - 20] ^= 0x01;
    return Encryption.TEXT_PREFIX + Base64.getEncoder().encodeToString(bytes);
  }

  @Test
  void sealedRoutesStoreNoPlaintextAndSendThePlaintext() throws Exception {
    Outbox outbox = outbox(keyring);
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      events.add(event(i % 2 == 0 ? "sink:main" : "sink", "m-" + i));
    }
    enqueue(outbox, events.toArray(OutboxEvent[]::new));

    Map<UUID, String> raw = rawPayloads();
    int sent = relay(outbox).runOnce();

    assertThat(raw).hasSize(20);
    assertThat(raw.values()).allSatisfy(p -> {
      assertThat(p).startsWith(Encryption.TEXT_PREFIX).doesNotContain(CARD).doesNotContain("marker");
      assertThat(Encryption.keyIdOf(p)).isEqualTo("k1");
    });
    assertThat(sent).isEqualTo(20);
    assertThat(sink.sent).extracting(OutboxMessage::payload)
        .containsExactlyInAnyOrderElementsOf(events.stream().map(OutboxEvent::payload).toList());
    assertThat(outbox.list(OutboxQuery.all()).entries()).allSatisfy(e -> {
      assertThat(e.status()).isEqualTo(OutboxStatus.DELIVERED);
      assertThat(e.payloadSealed()).isFalse();
      assertThat(e.payload()).contains(CARD);
    });
    assertThat(outbox.find(events.get(3).id()).orElseThrow().payload()).isEqualTo(events.get(3).payload());
    assertThat(unopened).isEmpty();
  }

  @Test
  void onlyTheGivenRoutesAreSealed() throws Exception {
    Outbox outbox = outbox(keyring);
    OutboxEvent plain = event("plain:x", "p");
    OutboxEvent sealed = event("sink:y", "s");

    enqueue(outbox, plain, sealed);

    Map<UUID, String> raw = rawPayloads();
    assertThat(raw.get(plain.id())).isEqualTo(plain.payload());
    assertThat(raw.get(sealed.id())).startsWith(Encryption.TEXT_PREFIX);
    assertThat(outbox.seals("plain:x")).isFalse();
    assertThat(outbox.seals("sink:anything")).isTrue();
    assertThat(relay(outbox).runOnce()).isEqualTo(2);
    assertThat(sink.sent).extracting(OutboxMessage::payload)
        .containsExactlyInAnyOrder(plain.payload(), sealed.payload());
  }

  @Test
  void aTamperedPayloadIsDeadAtOnceAndNeverSent() throws Exception {
    Outbox outbox = outbox(keyring);
    OutboxEvent tampered = event("sink:main", "t");
    OutboxEvent intact = event("sink:main", "i");
    enqueue(outbox, tampered, intact);
    setRawPayload(tampered.id(), flipOneByte(rawPayloads().get(tampered.id())));

    relay(outbox).runOnce();

    assertThat(sink.sent).extracting(OutboxMessage::id).containsExactly(intact.id());
    OutboxEntry dead = outbox.find(tampered.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(dead.lastError()).contains("TAMPERED").contains("not sent");
    assertThat(dead.payloadSealed()).isTrue();
    assertThat(outbox.list(OutboxQuery.status(OutboxStatus.DEAD)).entries()).extracting(OutboxEntry::id)
        .containsExactly(tampered.id());
    assertThat(unopened).extracting(DecryptionException::reason).containsExactly(Reason.TAMPERED);

    assertThat(outbox.replay(tampered.id())).isTrue();
    relay(outbox).runOnce();

    assertThat(sink.sent).extracting(OutboxMessage::id).containsExactly(intact.id());
    assertThat(outbox.find(tampered.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(unopened).hasSize(2);
  }

  @Test
  void aPayloadMovedToAnotherEventDoesNotOpen() throws Exception {
    Outbox outbox = outbox(keyring);
    OutboxEvent from = event("sink:main", "from");
    OutboxEvent to = event("sink:main", "to");
    enqueue(outbox, from, to);
    setRawPayload(to.id(), rawPayloads().get(from.id()));

    relay(outbox).runOnce();

    assertThat(sink.sent).extracting(OutboxMessage::id).containsExactly(from.id());
    assertThat(outbox.find(to.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(unopened).extracting(DecryptionException::reason).containsExactly(Reason.TAMPERED);
  }

  @Test
  void aKeyringWithoutTheSealingKeyGivesUnknownKey() throws Exception {
    OutboxEvent e = event("sink:main", "w");
    enqueue(outbox(keyring), e);
    Outbox other = outbox(Keyring.generate("k9"));

    relay(other).runOnce();

    assertThat(sink.sent).isEmpty();
    OutboxEntry dead = other.find(e.id()).orElseThrow();
    assertThat(dead.status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(dead.lastError()).contains("UNKNOWN_KEY").contains("k1");
    assertThat(dead.payloadSealed()).isTrue();
    assertThat(unopened).extracting(DecryptionException::reason).containsExactly(Reason.UNKNOWN_KEY);
  }

  @Test
  void anOutboxWithoutEncryptionDoesNotSendASealedPayload() throws Exception {
    OutboxEvent e = event("sink:main", "n");
    enqueue(outbox(keyring), e);
    Outbox plain = Outbox.builder(store).clock(clock).build();

    relay(plain).runOnce();

    assertThat(sink.sent).isEmpty();
    assertThat(plain.find(e.id()).orElseThrow().lastError()).contains("UNKNOWN_KEY").contains("no encryption");
    assertThat(unopened).extracting(DecryptionException::reason).containsExactly(Reason.UNKNOWN_KEY);
  }

  @Test
  void afterRotationOldPayloadsOpenAndNewOnesUseTheNewKey() throws Exception {
    OutboxEvent before = event("sink:main", "before");
    enqueue(outbox(keyring), before);
    Outbox rotated = outbox(keyring.withNewKey("k2"));
    OutboxEvent after = event("sink:main", "after");
    enqueue(rotated, after);

    Map<UUID, String> raw = rawPayloads();
    relay(rotated).runOnce();

    assertThat(Encryption.keyIdOf(raw.get(before.id()))).isEqualTo("k1");
    assertThat(Encryption.keyIdOf(raw.get(after.id()))).isEqualTo("k2");
    assertThat(sink.sent).extracting(OutboxMessage::payload).containsExactlyInAnyOrder(before.payload(),
        after.payload());
  }

  @Test
  void plaintextEventsFromBeforeEncryptionStillSend() throws Exception {
    OutboxEvent old = event("sink:main", "old");
    enqueue(Outbox.builder(store).clock(clock).build(), old);

    relay(outbox(keyring)).runOnce();

    assertThat(rawPayloads().get(old.id())).isEqualTo(old.payload());
    assertThat(sink.sent).extracting(OutboxMessage::payload).containsExactly(old.payload());
  }

  @Test
  void theSizeLimitAppliesToThePlaintextAndTheColumnHoldsTheSealedText() throws Exception {
    int limit = 256 * 1024;
    Outbox outbox = Outbox.builder(store).clock(clock).maxPayloadBytes(limit).validateJson(false)
        .encryption(Encryption.with(keyring), Set.of("sink")).build();
    String atLimit = "x".repeat(limit);
    OutboxEvent big = OutboxEvent.builder("blob").aggregate("b", "1").payload(atLimit).destination("sink").build();

    enqueue(outbox, big);
    relay(outbox).runOnce();

    assertThat(rawPayloads().get(big.id()).length()).isGreaterThan(limit);
    assertThat(sink.sent).extracting(OutboxMessage::payload).containsExactly(atLimit);
    OutboxEvent tooBig = OutboxEvent.builder("blob").aggregate("b", "2").payload(atLimit + "x").destination("sink")
        .build();
    assertThatThrownBy(() -> enqueue(outbox, tooBig)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("larger than " + limit);
    assertThatThrownBy(() -> Outbox.builder(store).maxPayloadBytes(16 << 20).encryptAll(Encryption.with(keyring))
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxPayloadBytes");
  }

  @Test
  void sealedTextIsNotAcceptedAsAPayload() throws Exception {
    Outbox outbox = outbox(keyring);
    String sealed = Encryption.with(keyring).sealText("{}", "elsewhere");
    OutboxEvent e = OutboxEvent.builder("x").aggregate("a", "1").payload(sealed).destination("plain").build();

    assertThatThrownBy(() -> enqueue(Outbox.builder(store).validateJson(false).build(), e))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sealed envelope");
    assertThatThrownBy(() -> enqueue(outbox, e)).isInstanceOf(IllegalArgumentException.class);
    assertThat(rawPayloads()).isEmpty();
  }
}
