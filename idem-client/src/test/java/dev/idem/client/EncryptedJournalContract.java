package dev.idem.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.client.TestServer.Reply;
import dev.idem.client.spi.PendingJournal;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.DecryptionException.Reason;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A journal with encryption: the journal contract holds with sealed bodies, the stored bytes hold no body in clear
 * text, and a body that does not open (tampered with, moved, an unknown key) fails loudly and is never resent.
 * Implementations give raw access to their storage.
 */
abstract class EncryptedJournalContract extends PendingJournalContractTest {
  static final String CARD = "4242424242424242";

  final Keyring keyring = Keyring.generate("k1");
  final Encryption encryption = Encryption.with(keyring);

  /** Empties the storage. */
  abstract void reset();

  /** A journal over the current storage, with {@code encryption} (none when null). */
  abstract PendingJournal journal(Encryption encryption);

  /** Everything stored, as ISO-8859-1 text, for scanning. */
  abstract String rawText() throws Exception;

  /** The stored body of {@code key}, as it is on disk. */
  abstract byte[] rawBody(String key) throws Exception;

  /** Overwrites the stored body of {@code key}, as someone with access to the storage could. */
  abstract void setRawBody(String key, byte[] body) throws Exception;

  @Override
  PendingJournal open() {
    reset();
    return journal(encryption);
  }

  @Override
  PendingJournal reopen() {
    return journal(encryption);
  }

  static Intent payment(String key, int n) {
    return intent(key, "{\"marker\":\"body-marker-" + n + "\",\"card\":\"" + CARD + "\"}");
  }

  /** The pending intents as a fresh journal with {@code encryption} reads them. */
  List<Intent> readPending(Encryption encryption) {
    try (PendingJournal journal = journal(encryption)) {
      return journal.pending();
    }
  }

  static DecryptionException decryptionCause(Throwable t) {
    assertThat(t).isInstanceOf(JournalException.class).hasCauseInstanceOf(DecryptionException.class);
    return (DecryptionException) t.getCause();
  }

  static byte[] flipOneByte(byte[] sealed) {
    byte[] copy = sealed.clone();
    copy[copy.length - 20] ^= 0x01;
    return copy;
  }

  @Test
  void aWorkloadLeavesNoBodyInClearText() throws Exception {
    reset();
    try (PendingJournal journal = journal(encryption)) {
      for (int i = 0; i < 10; i++) {
        journal.append(payment("pay-" + i, i));
      }
      journal.complete("pay-3");
      journal.complete("pay-7");
    }

    String raw = rawText();
    List<Intent> pending = readPending(encryption);

    assertThat(raw).contains("pay-0").doesNotContain(CARD).doesNotContain("body-marker");
    assertThat(Encryption.keyIdOf(rawBody("pay-0"))).isEqualTo("k1");
    assertThat(pending).hasSize(8);
    assertSameIntent(pending.get(0), payment("pay-0", 0));
    assertSameIntent(pending.get(7), payment("pay-9", 9));
  }

  @Test
  void aTamperedBodyFailsLoudlyAndIsNeverResent() throws Exception {
    reset();
    try (PendingJournal journal = journal(encryption)) {
      journal.append(payment("pay-t", 1));
    }
    setRawBody("pay-t", flipOneByte(rawBody("pay-t")));

    try (TestServer server = new TestServer(Reply.status(201))) {
      Throwable thrown = assertThrows(JournalException.class, () -> {
        try (PendingJournal journal = journal(encryption)) {
          new ClientFixture().builder().journal(journal).build().resumePending();
        }
      });

      assertThat(decryptionCause(thrown).reason()).isEqualTo(Reason.TAMPERED);
      assertThat(thrown).hasMessageContaining("pay-t").hasMessageContaining("TAMPERED")
          .hasMessageContaining("not resent");
      assertThat(server.received).isEmpty();
    }
    assertThatThrownBy(() -> readPending(encryption)).isInstanceOf(JournalException.class);
  }

  @Test
  void aBodyMovedToAnotherIntentDoesNotOpen() throws Exception {
    reset();
    try (PendingJournal journal = journal(encryption)) {
      journal.append(payment("pay-a", 1));
      journal.append(payment("pay-b", 2));
    }
    setRawBody("pay-b", rawBody("pay-a"));

    Throwable thrown = assertThrows(JournalException.class,
        () -> readPending(encryption));

    assertThat(decryptionCause(thrown).reason()).isEqualTo(Reason.TAMPERED);
    assertThat(thrown).hasMessageContaining("pay-b");
  }

  @Test
  void aKeyProviderWithoutTheSealingKeyGivesUnknownKey() {
    reset();
    try (PendingJournal journal = journal(encryption)) {
      journal.append(payment("pay-w", 1));
    }

    Throwable wrongKey = assertThrows(JournalException.class,
        () -> readPending(Encryption.with(Keyring.generate("k9"))));
    Throwable noEncryption = assertThrows(JournalException.class,
        () -> readPending(null));

    assertThat(decryptionCause(wrongKey).reason()).isEqualTo(Reason.UNKNOWN_KEY);
    assertThat(decryptionCause(wrongKey).keyId()).isEqualTo("k1");
    assertThat(decryptionCause(noEncryption).reason()).isEqualTo(Reason.UNKNOWN_KEY);
    assertThat(noEncryption).hasMessageContaining("no encryption");
    assertThat(readPending(encryption)).singleElement().satisfies(i -> assertSameIntent(i, payment("pay-w", 1)));
  }

  @Test
  void plaintextIntentsFromBeforeEncryptionStillRead() throws Exception {
    reset();
    try (PendingJournal journal = journal(null)) {
      journal.append(payment("pay-old", 1));
    }
    try (PendingJournal journal = journal(encryption)) {
      journal.append(payment("pay-new", 2));
    }

    List<Intent> pending = readPending(encryption);

    assertThat(new String(rawBody("pay-old"), UTF_8)).contains(CARD);
    assertThat(Encryption.isSealed(rawBody("pay-new"))).isTrue();
    assertThat(pending).hasSize(2);
    assertSameIntent(pending.get(0), payment("pay-old", 1));
    assertSameIntent(pending.get(1), payment("pay-new", 2));
  }

  @Test
  void afterRotationOldBodiesOpenAndNewOnesUseTheNewKey() throws Exception {
    reset();
    try (PendingJournal journal = journal(encryption)) {
      journal.append(payment("pay-k1", 1));
    }
    Encryption rotated = Encryption.with(keyring.withNewKey("k2"));
    try (PendingJournal journal = journal(rotated)) {
      journal.append(payment("pay-k2", 2));
    }

    List<Intent> pending = readPending(rotated);

    assertThat(Encryption.keyIdOf(rawBody("pay-k1"))).isEqualTo("k1");
    assertThat(Encryption.keyIdOf(rawBody("pay-k2"))).isEqualTo("k2");
    assertSameIntent(pending.get(0), payment("pay-k1", 1));
    assertSameIntent(pending.get(1), payment("pay-k2", 2));
  }
}
