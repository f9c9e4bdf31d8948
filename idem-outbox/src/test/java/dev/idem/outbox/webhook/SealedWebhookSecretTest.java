package dev.idem.outbox.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.DecryptionException.Reason;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Endpoint secrets sealed at rest: bound to their endpoint, opened for signing, loud when they do not open. */
class SealedWebhookSecretTest {
  final Keyring keyring = Keyring.generate("k1");
  final Encryption encryption = Encryption.with(keyring);
  final WebhookSecret secret = WebhookSecret.generate();

  @Test
  void aSealedSecretOpensForItsEndpointAndShowsNothingOfTheKey() {
    String stored = secret.seal(encryption, "we_1");

    assertThat(stored).startsWith(Encryption.TEXT_PREFIX).doesNotContain(secret.reveal().substring(6))
        .hasSize(183);
    assertThat(WebhookSecret.fromStored(stored, encryption, "we_1")).isEqualTo(secret);
    assertThat(WebhookSecret.fromStored(secret.reveal(), encryption, "we_1")).as("stored before encryption")
        .isEqualTo(secret);
  }

  @Test
  void aSecretMovedToAnotherEndpointOrTamperedWithDoesNotOpen() {
    String stored = secret.seal(encryption, "we_1");
    byte[] bytes = Base64.getDecoder().decode(stored.substring(Encryption.TEXT_PREFIX.length()));
    bytes[bytes.length - 5] ^= 0x01;
    String tampered = Encryption.TEXT_PREFIX + Base64.getEncoder().encodeToString(bytes);

    assertThatThrownBy(() -> WebhookSecret.fromStored(stored, encryption, "we_2"))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.TAMPERED));
    assertThatThrownBy(() -> WebhookSecret.fromStored(tampered, encryption, "we_1"))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.TAMPERED));
  }

  @Test
  void anUnknownKeyOrNoEncryptionGivesUnknownKey() {
    String stored = secret.seal(encryption, "we_1");

    assertThatThrownBy(() -> WebhookSecret.fromStored(stored, Encryption.with(Keyring.generate("k9")), "we_1"))
        .isInstanceOfSatisfying(DecryptionException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY);
          assertThat(e.keyId()).isEqualTo("k1");
        });
    assertThatThrownBy(() -> WebhookSecret.fromStored(stored, null, "we_1"))
        .isInstanceOfSatisfying(DecryptionException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY));
  }

  @Test
  void afterRotationOldSecretsOpenAndNewOnesUseTheNewKey() {
    String old = secret.seal(encryption, "we_1");
    Encryption rotated = Encryption.with(keyring.withNewKey("k2"));

    String fresh = secret.seal(rotated, "we_1");

    assertThat(WebhookSecret.fromStored(old, rotated, "we_1")).isEqualTo(secret);
    assertThat(Encryption.keyIdOf(old)).isEqualTo("k1");
    assertThat(Encryption.keyIdOf(fresh)).isEqualTo("k2");
  }

  @Test
  void theTransportKillsAnEventWhoseEndpointSecretDoesNotOpenWithoutSendingIt() throws Exception {
    AtomicInteger lookups = new AtomicInteger();
    WebhookEndpoints endpoints = new WebhookEndpoints() {
      @Override
      public Optional<WebhookEndpoint> find(String id) {
        lookups.incrementAndGet();
        throw new DecryptionException(Reason.TAMPERED, "k1", "does not authenticate");
      }

      @Override
      public void disable(String id, String reason) {
        throw new AssertionError("an endpoint is not disabled for a secret that does not open");
      }
    };
    OutboxMessage message = new OutboxMessage(UUID.randomUUID(), "payment.succeeded", "payment", "pay_1", "{}",
        Map.of(), "webhook:we_1", 1, Instant.now());

    DeliveryResult result = WebhookTransport.builder(endpoints).timeout(Duration.ofSeconds(5))
        .allowPrivateAddresses(true).build().send(message);

    assertThat(lookups).hasValue(1);
    assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
    assertThat(result.error()).hasValueSatisfying(e -> assertThat(e).contains("we_1", "TAMPERED", "k1"));
  }
}
