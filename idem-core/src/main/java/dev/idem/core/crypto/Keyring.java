package dev.idem.core.crypto;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.idem.core.ConfigurationException;
import dev.idem.core.spi.KeyProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A local {@link KeyProvider}: AES-256 key-encryption keys by id, newest first. The first key wraps new data keys;
 * the others only unwrap what they wrapped before, until every record sealed under them has expired or been
 * re-encrypted ({@link RecordReencryption}). Immutable and thread-safe.
 *
 * <p>The text form, in a file or an environment variable, is one {@code id:base64-key} entry per line or per comma,
 * newest first; blank lines and lines starting with {@code #} are ignored:
 *
 * <pre>
 * # newest first: k2 seals new data, k1 still opens old data
 * k2:3q2+7w...44 base64 characters...=
 * k1:q83vEj...44 base64 characters...=
 * </pre>
 *
 * Key ids are 1 to 64 characters of {@code A-Z a-z 0-9 . _ -}; keys are 32 random bytes. {@link #toString()} never
 * shows a key.
 */
public final class Keyring implements KeyProvider {
  private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final int KEY_BYTES = 32;
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Map<String, SecretKeySpec> keys;
  private final String currentKeyId;

  private Keyring(Map<String, SecretKeySpec> keys) {
    if (keys.isEmpty()) {
      throw new ConfigurationException("a keyring needs at least one key");
    }
    this.keys = Collections.unmodifiableMap(keys);
    this.currentKeyId = keys.keySet().iterator().next();
  }

  /** A keyring of the given keys, newest (current) first. Each key must be 32 bytes. */
  public static Keyring of(Map<String, byte[]> keysNewestFirst) {
    Map<String, SecretKeySpec> keys = new LinkedHashMap<>();
    keysNewestFirst.forEach((id, key) -> add(keys, id, key));
    return new Keyring(keys);
  }

  /** A keyring of one fresh random key under {@code keyId}. */
  public static Keyring generate(String keyId) {
    return of(Map.of(keyId, randomKey()));
  }

  /** Parses the text form (see the class comment). Errors name the entry, never a key. */
  public static Keyring parse(String text) {
    Objects.requireNonNull(text, "text");
    Map<String, SecretKeySpec> keys = new LinkedHashMap<>();
    int n = 0;
    for (String line : text.split("\\R")) {
      if (line.strip().startsWith("#")) {
        continue;
      }
      for (String piece : line.split(",")) {
        String entry = piece.strip();
        if (!entry.isEmpty()) {
          parseEntry(keys, entry, ++n);
        }
      }
    }
    return new Keyring(keys);
  }

  private static void parseEntry(Map<String, SecretKeySpec> keys, String entry, int n) {
    int colon = entry.indexOf(':');
    if (colon < 0) {
      throw new ConfigurationException("keyring entry " + n + " is not 'id:base64-key'");
    }
    String id = entry.substring(0, colon).strip();
    byte[] key;
    try {
      key = Base64.getDecoder().decode(entry.substring(colon + 1).strip());
    } catch (IllegalArgumentException e) {
      throw new ConfigurationException("keyring entry " + n + " ('" + safeId(id) + "'): the key is not base64");
    }
    add(keys, id, key);
    Arrays.fill(key, (byte) 0);
  }

  /** Reads a keyring file (the text form). */
  public static Keyring load(Path file) {
    try {
      return parse(Files.readString(file, UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the keyring " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Reads the keyring file, or creates it with one fresh key named {@code keyId} when it does not exist: readable and
   * writable by the owner only where the file system has POSIX permissions. Two processes racing to create it end
   * with the same file: the loser reads what the winner wrote.
   */
  public static Keyring loadOrCreate(Path file, String keyId) {
    if (Files.exists(file)) {
      return load(file);
    }
    Keyring created = generate(keyId);
    Path temp = null;
    try {
      Path dir = file.toAbsolutePath().getParent();
      if (dir != null) {
        Files.createDirectories(dir);
      }
      // written whole and forced under a name of its own, then published at once: a racing process never reads a
      // half-written keyring, and a crash never leaves an empty one that data was sealed under
      temp = file.resolveSibling(file.getFileName() + "." + Long.toHexString(RANDOM.nextLong()) + ".new");
      created.writeNew(temp);
      publish(temp, file);
      return created;
    } catch (FileAlreadyExistsException e) {
      return load(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the keyring " + file + ": " + e.getMessage(), e);
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException ignored) {
          // a stray temporary file holds a key nobody uses
        }
      }
    }
  }

  /**
   * Makes the complete {@code temp} appear as {@code file} unless {@code file} exists: a hard link (atomic create-if-
   * absent) where the file system has them, else a move without replacing.
   *
   * @throws FileAlreadyExistsException when another process published first
   */
  private static void publish(Path temp, Path file) throws IOException {
    try {
      Files.createLink(file, temp);
    } catch (FileAlreadyExistsException e) {
      throw e;
    } catch (UnsupportedOperationException | FileSystemException e) {
      Files.move(temp, file);
    }
    Path dir = file.toAbsolutePath().getParent();
    if (dir != null) {
      try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
        d.force(true);
      } catch (IOException | UnsupportedOperationException e) {
        // some platforms cannot open a directory; the link or move is atomic there
      }
    }
  }

  /** This keyring with a fresh random key {@code keyId} in front: it seals new data from now on. */
  public Keyring withNewKey(String keyId) {
    if (keys.containsKey(keyId)) {
      throw new ConfigurationException("keyring already holds a key '" + safeId(keyId) + "'");
    }
    Map<String, SecretKeySpec> next = new LinkedHashMap<>();
    add(next, keyId, randomKey());
    next.putAll(keys);
    return new Keyring(next);
  }

  /** This keyring without {@code keyId}, which must not be the current key: data sealed under it becomes unreadable. */
  public Keyring without(String keyId) {
    if (keyId.equals(currentKeyId)) {
      throw new ConfigurationException("cannot remove the current key '" + safeId(keyId) + "'");
    }
    Map<String, SecretKeySpec> next = new LinkedHashMap<>(keys);
    next.remove(keyId);
    return new Keyring(next);
  }

  /** Writes the text form to {@code file}, replacing it atomically, owner-only where POSIX permissions exist. */
  public void write(Path file) {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      Files.deleteIfExists(tmp);
      writeNew(tmp);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the keyring " + file + ": " + e.getMessage(), e);
    }
  }

  /** The key ids, newest first. */
  public List<String> keyIds() {
    return List.copyOf(new ArrayList<>(keys.keySet()));
  }

  @Override
  public String currentKeyId() {
    return currentKeyId;
  }

  @Override
  public WrappedKey wrap(byte[] dataKey) {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, keys.get(currentKeyId), new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(associatedData(currentKeyId));
      byte[] sealed = cipher.doFinal(dataKey);
      byte[] out = new byte[NONCE_BYTES + sealed.length];
      System.arraycopy(nonce, 0, out, 0, NONCE_BYTES);
      System.arraycopy(sealed, 0, out, NONCE_BYTES, sealed.length);
      return new WrappedKey(currentKeyId, out);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available in this JDK", e);
    }
  }

  @Override
  public byte[] unwrap(String keyId, byte[] wrappedKey) {
    SecretKeySpec key = keys.get(keyId);
    if (key == null) {
      throw new DecryptionException(DecryptionException.Reason.UNKNOWN_KEY, keyId,
          "the keyring holds no key '" + safeId(keyId) + "' (it holds " + keys.keySet() + ")");
    }
    if (wrappedKey.length <= NONCE_BYTES) {
      throw new DecryptionException(DecryptionException.Reason.MALFORMED, keyId, "the wrapped data key is too short");
    }
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, wrappedKey, 0, NONCE_BYTES));
      cipher.updateAAD(associatedData(keyId));
      return cipher.doFinal(wrappedKey, NONCE_BYTES, wrappedKey.length - NONCE_BYTES);
    } catch (AEADBadTagException e) {
      throw new DecryptionException(DecryptionException.Reason.TAMPERED, keyId,
          "the data key wrapped under '" + keyId + "' does not authenticate", e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available in this JDK", e);
    }
  }

  @Override
  public String toString() {
    return "Keyring" + keys.keySet() + " (current " + currentKeyId + ")";
  }

  private void writeNew(Path file) throws IOException {
    StringBuilder text = new StringBuilder("# Idem keyring, newest key first. Keep it secret; back it up.\n");
    keys.forEach((id, key) -> text.append(id).append(':')
        .append(Base64.getEncoder().encodeToString(key.getEncoded())).append('\n'));
    try {
      Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(file);
    }
    try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer bytes = ByteBuffer.wrap(text.toString().getBytes(UTF_8));
      while (bytes.hasRemaining()) {
        out.write(bytes);
      }
      out.force(true);
    }
  }

  private static void add(Map<String, SecretKeySpec> keys, String id, byte[] key) {
    if (id == null || !KEY_ID.matcher(id).matches()) {
      throw new ConfigurationException("a key id is 1 to 64 characters of A-Z a-z 0-9 . _ -, got "
          + (id == null ? "none" : id.length() + " characters") + " (is the entry 'id:base64-key', id first?)");
    }
    if (key == null || key.length != KEY_BYTES) {
      throw new ConfigurationException("key '" + id + "' must be " + KEY_BYTES + " bytes (AES-256), got "
          + (key == null ? "none" : key.length));
    }
    if (keys.putIfAbsent(id, new SecretKeySpec(key, "AES")) != null) {
      throw new ConfigurationException("the keyring names key '" + id + "' twice");
    }
  }

  private static byte[] randomKey() {
    byte[] key = new byte[KEY_BYTES];
    RANDOM.nextBytes(key);
    return key;
  }

  private static byte[] associatedData(String keyId) {
    return ("idem.keyring.v1:" + keyId).getBytes(UTF_8);
  }

  /** An id as errors may show it: itself when it is a valid id, else only its length (it may be a key put first). */
  private static String safeId(String id) {
    if (id == null) {
      return "none";
    }
    return KEY_ID.matcher(id).matches() ? id : "an invalid id of " + id.length() + " characters";
  }
}
