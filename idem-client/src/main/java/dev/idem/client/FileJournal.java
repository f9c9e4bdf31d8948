package dev.idem.client;

import dev.idem.client.spi.PendingJournal;
import dev.idem.core.crypto.Encryption;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32;

/**
 * A {@link PendingJournal} in one append-only local file. Thread-safe (one monitor); one instance per file: opening
 * takes an exclusive lock on {@code <file>.lock}, held until {@link #close()}, so a second instance on the same file,
 * in this process or another, fails to open with a {@link JournalException} instead of overwriting the first one's
 * records.
 *
 * <p>Format: a sequence of records, each {@code [int length][int crc32 of payload][payload]} (big-endian), the payload
 * being {@code [byte type]} then, for an intent ({@code type 1}): key, method, URI, header count, header names and
 * values, body; for a completion ({@code type 2}): the key. Strings and the body are {@code [int length][bytes]},
 * strings in UTF-8. A record is at most {@link #MAX_RECORD_BYTES} bytes unless configured otherwise.
 *
 * <p>With {@link Builder#encryption(Encryption)}, request bodies are sealed at rest: an intent is written as a
 * {@code type 3} record, the same fields with the body replaced by its envelope ({@link Encryption#seal}, associated
 * data binding the key, method and URI). Opening the journal opens them; a body that does not open (tampered with, or
 * sealed under a key the key provider lacks) fails the opening with a {@link JournalException} naming the key and the
 * reason, and the file is left as it is: the intent is never resent with other bytes, nor dropped. Plaintext
 * {@code type 1} records written before encryption was turned on are still read, and compaction rewrites every
 * pending intent sealed under the current key. The method, URI and headers stay in clear text.
 *
 * <p>Implementation note, crash safety: every append writes one whole record and forces it to the device
 * ({@link FileChannel#force(boolean) force(true)}) before returning, so a crash can only leave the last record torn.
 * Opening the file replays it; the first record that is short, too long or fails its CRC ends the log, and the file
 * is truncated there so that later appends are not written after garbage. A torn record is therefore ignored, never
 * misread. When every intent is complete, or when completed records make up most of the file, the file is rewritten
 * with the pending intents only: to a temporary file in the same directory, forced, moved over the journal with
 * {@link StandardCopyOption#ATOMIC_MOVE}, and the directory forced (where the platform allows opening a directory).
 */
public final class FileJournal implements PendingJournal {
  private static final System.Logger LOG = System.getLogger(FileJournal.class.getName());
  /** Default largest record, header included. */
  public static final int MAX_RECORD_BYTES = 1024 * 1024;

  private static final byte INTENT = 1;
  private static final byte COMPLETION = 2;
  private static final byte SEALED_INTENT = 3;
  private static final int COMPACT_AFTER_COMPLETIONS = 1024;

  private final Path file;
  private final int maxRecordBytes;
  private final Encryption encryption;
  private final Map<String, Intent> pending = new LinkedHashMap<>();
  private FileChannel channel;
  private FileChannel lockChannel;
  private int completedRecords;
  private boolean closed;

  private FileJournal(Path file, int maxRecordBytes, Encryption encryption) {
    this.file = file;
    this.maxRecordBytes = maxRecordBytes;
    this.encryption = encryption;
  }

  /** A builder of the journal at {@code file}, for options beyond {@link #open(Path, int)}. */
  public static Builder builder(Path file) {
    return new Builder(file);
  }

  /** Opens (creating if absent) the journal at {@code file} with records up to {@link #MAX_RECORD_BYTES}. */
  public static FileJournal open(Path file) {
    return open(file, MAX_RECORD_BYTES);
  }

  /**
   * Opens (creating if absent) the journal at {@code file}, replaying it.
   *
   * @throws IllegalArgumentException unless {@code maxRecordBytes >= 64}
   * @throws JournalException when the file cannot be read or written
   */
  public static FileJournal open(Path file, int maxRecordBytes) {
    return builder(file).maxRecordBytes(maxRecordBytes).open();
  }

  /** {@code maxRecordBytes} when it is valid, for both journals' builders. */
  static int checkMaxRecordBytes(int maxRecordBytes) {
    if (maxRecordBytes < 64) {
      throw new IllegalArgumentException("maxRecordBytes must be >= 64, was " + maxRecordBytes);
    }
    return maxRecordBytes;
  }

  /** The journal's file. */
  public Path file() {
    return file;
  }

  @Override
  public synchronized void append(Intent intent) {
    Objects.requireNonNull(intent, "intent");
    String key = intent.key().orElseThrow(() -> new IllegalArgumentException(
        "journal " + file + ": an intent needs a key to be journaled, was " + intent));
    Intent existing = pending.get(key);
    if (existing != null) {
      if (existing.sameRequestAs(intent)) {
        return;
      }
      throw new JournalException("journal " + file + ": key " + key + " is already pending for a different intent ("
          + existing + "), not " + intent + ". An idempotency key names one intent; use a new key for a different"
          + " request, or complete the pending one first.", null);
    }
    write(encodeIntent(intent), "append failed", "The intent was not sent; nothing is known to the server.");
    pending.put(key, intent);
  }

  @Override
  public synchronized void complete(String key) {
    Objects.requireNonNull(key, "key");
    if (!pending.containsKey(key)) {
      return;
    }
    write(encodeCompletion(key), "recording the completion of key " + key + " failed",
        "The intent stays pending here; resending it with its key gets the server's kept answer.");
    pending.remove(key);
    completedRecords++;
    if (pending.isEmpty() || completedRecords >= COMPACT_AFTER_COMPLETIONS && completedRecords > pending.size()) {
      try {
        compact();
      } catch (JournalException e) {
        // The completion is durable; a failed compaction only leaves a longer file. It is retried next time.
        LOG.log(System.Logger.Level.WARNING, e.getMessage(), e);
      }
    }
  }

  @Override
  public synchronized List<Intent> pending() {
    ensureOpen();
    return List.copyOf(pending.values());
  }

  /** Rewrites the file with the pending intents only (see the class comment). */
  public synchronized void compact() {
    ensureOpen();
    Path temp = file.resolveSibling(file.getFileName() + ".compact");
    try {
      try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        for (Intent intent : pending.values()) {
          ByteBuffer record = encodeIntent(intent);
          while (record.hasRemaining()) {
            out.write(record);
          }
        }
        out.force(true);
      }
      channel.close();
      try {
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory();
        completedRecords = 0;
      } finally {
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.READ);
        channel.position(channel.size());
      }
    } catch (IOException e) {
      throw new JournalException("journal " + file + ": compaction failed: " + e.getMessage()
          + ". The journal is unchanged unless the move succeeded; reopen it to continue.", e);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      channel.close();
    } catch (IOException e) {
      throw new JournalException("journal " + file + ": close failed: " + e.getMessage(), e);
    } finally {
      unlock();
    }
  }

  /** Takes the lock on {@code <file>.lock}, or fails when another instance holds it. */
  private void lock() throws IOException {
    Path lockFile = file.resolveSibling(file.getFileName() + ".lock");
    lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock held;
    try {
      held = lockChannel.tryLock(); // released when lockChannel closes
    } catch (OverlappingFileLockException e) {
      held = null;
    }
    if (held == null) {
      lockChannel.close();
      lockChannel = null;
      throw new JournalException("journal " + file + " is open in another FileJournal (of this process or another,"
          + " holding " + lockFile + "); one instance per file, or their records overwrite each other");
    }
  }

  private void unlock() {
    try {
      if (lockChannel != null) {
        lockChannel.close(); // releases the lock
      }
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "journal " + file + ": releasing its lock failed: " + e.getMessage(), e);
    }
    lockChannel = null;
  }

  @Override
  public String toString() {
    return "FileJournal[" + file + "]";
  }

  private void replay() {
    try {
      Path parent = file.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      lock();
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      replayRecords();
    } catch (IOException e) {
      closeAfterFailedOpen(null);
      throw new JournalException("journal " + file + ": cannot open: " + e.getMessage(), e);
    } catch (JournalException e) {
      closeAfterFailedOpen(e);
      throw e;
    }
  }

  private void closeAfterFailedOpen(JournalException failure) {
    closed = true;
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException c) {
        if (failure != null) {
          failure.addSuppressed(c);
        }
      }
    }
    unlock();
  }

  private void replayRecords() throws IOException {
    long size = channel.size();
    long position = 0;
    ByteBuffer header = ByteBuffer.allocate(8);
    while (position + 8 <= size) {
      header.clear();
      readFully(header, position);
      int length = header.getInt(0);
      int crc = header.getInt(4);
      // The size limit applies to writes only: a complete record written under a larger limit is still read.
      if (length < 1 || position + 8 + length > size) {
        break;
      }
      ByteBuffer payload = ByteBuffer.allocate(length);
      readFully(payload, position + 8);
      CRC32 check = new CRC32();
      check.update(payload.array());
      if ((int) check.getValue() != crc || !apply(payload.array())) {
        break;
      }
      position += 8 + length;
    }
    if (position < size) {
      channel.truncate(position);
      channel.force(true);
    }
    channel.position(position);
  }

  private void readFully(ByteBuffer buffer, long position) throws IOException {
    while (buffer.hasRemaining()) {
      if (channel.read(buffer, position + buffer.position()) < 0) {
        throw new IOException("unexpected end of file");
      }
    }
  }

  /**
   * Applies one checked payload; false when it does not decode (treated as the end of the log).
   *
   * @throws JournalException when a sealed body does not open: the record is whole, so it is not torn, and the
   *     journal must not be truncated there
   */
  private boolean apply(byte[] payload) {
    try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(payload))) {
      byte type = in.readByte();
      if (type == COMPLETION) {
        if (pending.remove(readString(in)) != null) {
          completedRecords++;
        }
        return true;
      }
      if (type != INTENT && type != SEALED_INTENT) {
        return false;
      }
      String key = readString(in);
      String method = readString(in);
      URI uri = URI.create(readString(in));
      int headerCount = in.readInt();
      Intent intent = Intent.of(method, uri);
      for (int i = 0; i < headerCount; i++) {
        intent = intent.withHeader(readString(in), readString(in));
      }
      byte[] body = readBytes(in);
      if (type == SEALED_INTENT) {
        body = SealedBodies.open(encryption, "journal " + file, key, method, uri.toString(), body);
      }
      intent = intent.withBody(body).withKey(key);
      pending.put(key, intent);
      return true;
    } catch (JournalException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private ByteBuffer encodeIntent(Intent intent) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      String key = intent.key().orElseThrow();
      out.writeByte(encryption == null ? INTENT : SEALED_INTENT);
      writeString(out, key);
      writeString(out, intent.method());
      writeString(out, intent.uri().toString());
      out.writeInt(intent.headers().size());
      for (Map.Entry<String, String> h : intent.headers()) {
        writeString(out, h.getKey());
        writeString(out, h.getValue());
      }
      byte[] body = encryption == null ? intent.bodyUnsafe()
          : SealedBodies.seal(encryption, key, intent.method(), intent.uri().toString(), intent.bodyUnsafe());
      out.writeInt(body.length);
      out.write(body);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return frame(bytes.toByteArray(), intent);
  }

  private ByteBuffer encodeCompletion(String key) {
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    ByteBuffer payload = ByteBuffer.allocate(1 + 4 + k.length).put(COMPLETION).putInt(k.length).put(k);
    return frame(payload.array(), key);
  }

  private ByteBuffer frame(byte[] payload, Object what) {
    if (payload.length + 8 > maxRecordBytes) {
      throw new JournalException("journal " + file + ": the record of " + what + " is " + (payload.length + 8)
          + " bytes, more than maxRecordBytes " + maxRecordBytes + ". Send smaller bodies or open the journal with a"
          + " larger maxRecordBytes.");
    }
    CRC32 crc = new CRC32();
    crc.update(payload);
    ByteBuffer record = ByteBuffer.allocate(8 + payload.length);
    record.putInt(payload.length).putInt((int) crc.getValue()).put(payload).flip();
    return record;
  }

  private void write(ByteBuffer record, String what, String consequence) {
    ensureOpen();
    long start = -1;
    try {
      start = channel.position();
      while (record.hasRemaining()) {
        channel.write(record);
      }
      channel.force(true);
    } catch (IOException e) {
      // Never leave a torn record before later ones: replay would stop at it and drop everything after.
      if (start >= 0) {
        try {
          channel.truncate(start);
          channel.position(start);
          channel.force(true);
        } catch (IOException undo) {
          e.addSuppressed(undo);
          closed = true;
        }
      }
      throw new JournalException("journal " + file + ": " + what + ": " + e.getMessage() + ". " + consequence, e);
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("journal " + file + " is closed");
    }
  }

  private void forceDirectory() {
    Path dir = file.getParent();
    if (dir == null) {
      return;
    }
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      // some platforms (Windows) cannot open a directory; the move itself is atomic there
    }
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  private static String readString(DataInputStream in) throws IOException {
    return new String(readBytes(in), StandardCharsets.UTF_8);
  }

  /** A field of a checked payload: it cannot be longer than what is left of that payload. */
  private static byte[] readBytes(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > in.available()) {
      throw new IOException("bad length " + length);
    }
    return in.readNBytes(length);
  }

  /** Options of a {@link FileJournal}. Mutable, not thread-safe. */
  public static final class Builder {
    private final Path file;
    private int maxRecordBytes = MAX_RECORD_BYTES;
    private Encryption encryption;

    private Builder(Path file) {
      this.file = Objects.requireNonNull(file, "file");
    }

    /**
     * The largest record, header included (default {@link #MAX_RECORD_BYTES}); with encryption, the sealed body
     * counts (95 bytes plus the key id more, with a local keyring).
     *
     * @throws IllegalArgumentException unless {@code >= 64}
     */
    public Builder maxRecordBytes(int maxRecordBytes) {
      this.maxRecordBytes = FileJournal.checkMaxRecordBytes(maxRecordBytes);
      return this;
    }

    /** Seals request bodies at rest with {@code encryption} (see the class comment). Off by default. */
    public Builder encryption(Encryption encryption) {
      this.encryption = Objects.requireNonNull(encryption, "encryption");
      return this;
    }

    /**
     * Opens (creating if absent) the journal, replaying it.
     *
     * @throws JournalException when the file cannot be read or written, or a sealed body in it does not open
     */
    public FileJournal open() {
      FileJournal journal = new FileJournal(file.toAbsolutePath(), maxRecordBytes, encryption);
      journal.replay();
      return journal;
    }
  }
}
