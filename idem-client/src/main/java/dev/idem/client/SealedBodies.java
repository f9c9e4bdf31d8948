package dev.idem.client;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.Encryption;

/**
 * How both journals seal request bodies: {@link Encryption#seal} with associated data binding the intent's key,
 * method and URI, so that a body moved to another intent (or an intent whose method or URI was edited) does not open.
 * A body that does not open is a {@link JournalException} whose cause is the {@link DecryptionException}: never
 * retryable, and never a resend of other bytes.
 */
final class SealedBodies {
  private static final String ASSOCIATED_DATA = "idem.client.journal.body.v1\n";

  private SealedBodies() {}

  static byte[] seal(Encryption encryption, String key, String method, String uri, byte[] body) {
    return encryption.seal(body, associatedData(key, method, uri));
  }

  /**
   * Opens a sealed body.
   *
   * @param encryption the journal's, or null when it has none (then a sealed body is an unknown key)
   * @throws JournalException when the body does not open
   */
  static byte[] open(Encryption encryption, String journal, String key, String method, String uri, byte[] sealed) {
    if (encryption == null) {
      String keyId = keyIdOrNull(sealed);
      throw new JournalException(journal + ": the body of the intent with key " + key + " is sealed (key '" + keyId
          + "'), and the journal has no encryption: open it with encryption(...) over the key provider that sealed"
          + " it. The intent is not resent.", new DecryptionException(DecryptionException.Reason.UNKNOWN_KEY, keyId,
              "no encryption configured"));
    }
    try {
      return encryption.open(sealed, associatedData(key, method, uri));
    } catch (DecryptionException e) {
      throw new JournalException(journal + ": the body of the intent with key " + key + " cannot be opened ("
          + e.reason() + (e.keyId() == null ? "" : ", key '" + e.keyId() + "'") + "): " + e.getMessage() + ". "
          + advice(e.reason()) + " The intent is not resent.", e);
    }
  }

  private static String advice(DecryptionException.Reason reason) {
    switch (reason) {
      case UNKNOWN_KEY:
        return "Give the journal a key provider that still holds that key.";
      case TAMPERED:
        return "The stored intent was altered or moved; find out by whom, then complete it by hand.";
      default:
        return "The stored body is damaged; complete the intent by hand.";
    }
  }

  private static String keyIdOrNull(byte[] sealed) {
    try {
      return Encryption.keyIdOf(sealed);
    } catch (DecryptionException e) {
      return null;
    }
  }

  private static byte[] associatedData(String key, String method, String uri) {
    return (ASSOCIATED_DATA + key + '\n' + method + ' ' + uri).getBytes(UTF_8);
  }
}
