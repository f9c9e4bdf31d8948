package dev.idem.core.crypto;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyAdmin;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An {@link IdempotencyStore} that keeps the answers of another one sealed: the status stays readable (purge and the
 * operator views use it), while the headers and the body are sealed together under {@link Encryption}, bound to the
 * record's scope, operation, key and status. The values phases record in a checkpoint (request data, the outside
 * system's ids) are sealed too, bound to the record. A sealed answer moved to another record, or given another status,
 * does not open. The per-field hashes of the fingerprint are sealed too: a hash of one field's value can be reversed by
 * hashing the likely values (amounts, currencies, account numbers), so they travel inside the answer's envelope when
 * the record has an answer, and in an envelope of their own (bound to the record) when it has none yet. The overall
 * fingerprint stays a plain hash, readable by the store's queries and by {@code idem fingerprint}. Records read back
 * are opened before the engine sees them; what was written before encryption was turned on is read as it is.
 *
 * <p>An answer that does not open (tampered with, or sealed under a key the key provider no longer holds) makes the
 * read fail with {@link DecryptionException}: the request fails loudly (the servlet filter answers
 * {@code INTERNAL.record_unreadable}), the listener's {@link IdemListener#onRecordUnreadable} counts it, and nothing
 * is run again. The operator listing ({@link #admin()}) shows such a record still sealed rather than failing.
 *
 * <p>{@code Idem.builder().encryption(...)} wraps its store in one; build one directly only to share it. Thread-safe.
 */
public final class EncryptedIdempotencyStore implements IdempotencyStore {
  /** The header that marks a sealed answer in the underlying store; a replay never carries it. */
  public static final String SEALED_HEADER = "idem-sealed";
  private static final OperationPolicy CAP_AT_ONCE =
      OperationPolicy.builder().resumeCap(1, Duration.ofDays(36_500)).build();
  /** The names of the checkpoint values that hold a sealed checkpoint: this prefix and 0, 1, 2... */
  public static final String SEALED_CHECKPOINT = "idem-sealed-";
  /** Characters per chunk of a sealed checkpoint: a checkpoint value's most. Only the chunks joined are base64. */
  private static final int CHUNK = Checkpoint.MAX_VALUE;
  /**
   * The one entry of the field hashes of a record without an answer whose field hashes are sealed: its value is the
   * sealed text. A real field's hash is 16 hex characters, never an envelope, so the two cannot be confused.
   */
  public static final String SEALED_FIELDS = "idem-sealed";
  /** The sealed-header value of an answer sealed alone. */
  private static final String ANSWER_ONLY = "1";
  /** The sealed-header value of an answer sealed with the fingerprint's field hashes in front of it. */
  private static final String ANSWER_AND_FIELDS = "2";

  private final IdempotencyStore store;
  private final Encryption encryption;
  private final IdemListener listener;
  private final boolean sealFieldHashes;

  private EncryptedIdempotencyStore(IdempotencyStore store, Encryption encryption, IdemListener listener,
      boolean sealFieldHashes) {
    this.store = Objects.requireNonNull(store, "store");
    this.encryption = Objects.requireNonNull(encryption, "encryption");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.sealFieldHashes = sealFieldHashes;
  }

  /** {@code store} with its answers sealed under {@code encryption}; failures to open are reported to the listener. */
  public static EncryptedIdempotencyStore wrap(IdempotencyStore store, Encryption encryption, IdemListener listener) {
    return wrap(store, encryption, listener, true);
  }

  /**
   * {@link #wrap(IdempotencyStore, Encryption, IdemListener)}, with the field hashes left in the clear when
   * {@code sealFieldHashes} is false: only while nodes of a version that seals answers but cannot open sealed field
   * hashes share the store (a rolling upgrade). Both forms are opened either way.
   */
  public static EncryptedIdempotencyStore wrap(IdempotencyStore store, Encryption encryption, IdemListener listener,
      boolean sealFieldHashes) {
    if (store instanceof EncryptedIdempotencyStore) {
      throw new IllegalArgumentException("the store '" + store.name() + "' is already encrypted");
    }
    return new EncryptedIdempotencyStore(store, encryption, listener, sealFieldHashes);
  }

  /** The store underneath, which holds the sealed answers. */
  public IdempotencyStore unwrap() {
    return store;
  }

  /**
   * Whether the fingerprints' field hashes are sealed on the way in (see {@link #wrap(IdempotencyStore, Encryption,
   * IdemListener, boolean)}).
   */
  public boolean sealsFieldHashes() {
    return sealFieldHashes;
  }

  /** The key id new answers are sealed under. */
  public String currentKeyId() {
    return encryption.currentKeyId();
  }

  /** Whether the record's answer is sealed (as the underlying store holds it). */
  public static boolean isSealed(IdempotencyRecord record) {
    return record.response() != null && record.response().header(SEALED_HEADER) != null;
  }

  /**
   * Whether any part of the record is sealed as the underlying store holds it (its answer, its field hashes, its
   * checkpoint): what an operator view must open before it can show or change the record.
   */
  public static boolean holdsSealedData(IdempotencyRecord record) {
    return isSealed(record) || isSealed(record.checkpoint())
        || sealedFieldsText(record.fingerprint().fieldHashes()) != null;
  }

  /**
   * The record with its answer, its field hashes and its checkpoint values sealed, as the underlying store keeps it;
   * parts that are empty or already sealed stay as they are.
   */
  public IdempotencyRecord seal(IdempotencyRecord record) {
    IdempotencyRecord out = record;
    Checkpoint checkpoint = record.checkpoint();
    if (!checkpoint.isEmpty() && !isSealed(checkpoint)) {
      out = out.withCheckpoint(sealCheckpoint(record.key(), checkpoint));
    }
    Map<String, String> fields = record.fingerprint().fieldHashes();
    boolean plainFields = sealFieldHashes && !fields.isEmpty() && sealedFieldsText(fields) == null;
    StoredResponse response = record.response();
    if (response == null || isSealed(record)) {
      if (!plainFields) {
        return out;
      }
      String sealed = encryption.sealText(encodeFields(fields), fieldsData(record.key()));
      return out.withFingerprint(new Fingerprint(record.fingerprint().hash(), Map.of(SEALED_FIELDS, sealed)));
    }
    if (!plainFields) {
      byte[] sealed = encryption.seal(encode(null, response), associatedData(record.key(), response.status()));
      return out.withResponse(StoredResponse.of(response.status(), Map.of(SEALED_HEADER, List.of(ANSWER_ONLY)),
          sealed));
    }
    // one envelope for both: a replay opens one, and the field hashes leave the store's own column
    byte[] sealed = encryption.seal(encode(fields, response), answerAndFieldsData(record.key(), response.status()));
    return out.withFingerprint(Fingerprint.ofHash(record.fingerprint().hash())).withResponse(
        StoredResponse.of(response.status(), Map.of(SEALED_HEADER, List.of(ANSWER_AND_FIELDS)), sealed));
  }

  /**
   * The record with its answer, its field hashes and its checkpoint opened; unchanged when nothing is sealed.
   *
   * @throws DecryptionException when a sealed part does not open
   */
  public IdempotencyRecord open(IdempotencyRecord record) {
    boolean sealedCheckpoint = isSealed(record.checkpoint());
    String sealedFields = sealedFieldsText(record.fingerprint().fieldHashes());
    if (!isSealed(record) && !sealedCheckpoint && sealedFields == null) {
      return record;
    }
    try {
      IdempotencyRecord out = record;
      if (sealedCheckpoint) {
        out = out.withCheckpoint(openCheckpoint(record.key(), record.checkpoint()));
      }
      if (answerHoldsFields(record)) {
        // the answer's envelope holds the field hashes; a copy a claim left in the store's column is older
        StoredResponse sealed = record.response();
        ByteBuffer in = ByteBuffer.wrap(encryption.open(sealed.body(),
            answerAndFieldsData(record.key(), sealed.status())));
        Map<String, String> fields = decodeFields(in);
        return out.withFingerprint(new Fingerprint(record.fingerprint().hash(), fields))
            .withResponse(decode(sealed.status(), in));
      }
      if (sealedFields != null) {
        out = out.withFingerprint(new Fingerprint(record.fingerprint().hash(),
            decodeFields(encryption.openText(sealedFields, fieldsData(record.key())))));
      }
      if (!isSealed(record)) {
        return out;
      }
      StoredResponse sealed = record.response();
      byte[] plain = encryption.open(sealed.body(), associatedData(record.key(), sealed.status()));
      return out.withResponse(decode(sealed.status(), ByteBuffer.wrap(plain)));
    } catch (DecryptionException e) {
      listener.onRecordUnreadable(store.name(), record.key(), e);
      throw new DecryptionException(e.reason(), e.keyId(), "the kept answer of " + record.key() + " in store '"
          + store.name() + "' cannot be opened (" + e.reason() + "): " + e.getMessage()
          + ". Nothing was run again; an operator must resolve or evict the record", e);
    }
  }

  @Override
  public String name() {
    return store.name();
  }

  @Override
  public boolean transactional() {
    return store.transactional();
  }

  @Override
  public boolean joinsCallerTransaction() {
    return store.joinsCallerTransaction();
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return store.inTransaction(work);
  }

  @Override
  public Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key) {
    return store.find(tx, key).map(this::open);
  }

  @Override
  public Optional<IdempotencyRecord> find(RecordKey key) {
    return store.find(key).map(this::open);
  }

  @Override
  public boolean insert(StoreTransaction tx, IdempotencyRecord record) {
    return store.insert(tx, seal(record));
  }

  @Override
  public boolean insertLast(StoreTransaction tx, IdempotencyRecord record) {
    return store.insertLast(tx, seal(record));
  }

  @Override
  public boolean update(StoreTransaction tx, IdempotencyRecord next) {
    return store.update(tx, seal(next));
  }

  @Override
  public boolean updateLast(StoreTransaction tx, IdempotencyRecord next) {
    return store.updateLast(tx, seal(next));
  }

  @Override
  public boolean delete(StoreTransaction tx, RecordKey key, long version) {
    return store.delete(tx, key, version);
  }

  @Override
  public boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now) {
    return store.deleteIfExpired(tx, key, now);
  }

  @Override
  public List<IdempotencyRecord> findLeaseExpired(Instant now, Collection<Operation> operations, int limit) {
    List<IdempotencyRecord> records = store.findLeaseExpired(now, operations, limit);
    List<IdempotencyRecord> opened = new ArrayList<>(records.size());
    for (IdempotencyRecord record : records) {
      try {
        opened.add(open(record));
      } catch (DecryptionException e) {
        quarantine(record, now);
      }
    }
    return opened;
  }

  /**
   * A record in progress whose checkpoint does not open can never be resumed: it becomes uncertain (a version-checked
   * update of the store underneath), so that it leaves the lease-expired records, whose oldest it would otherwise
   * head for good, and waits for an operator. Its outside effect is unknown; nothing runs it again.
   */
  private void quarantine(IdempotencyRecord record, Instant now) {
    if (record.state() != RecordState.IN_PROGRESS || record.recoveryPoint() == null) {
      return;
    }
    IdempotencyRecord uncertain = record.afterFailedResume(CAP_AT_ONCE, Duration.ZERO, now);
    try {
      store.inTransaction(tx -> store.update(tx, uncertain));
    } catch (Exception e) {
      // another worker wrote it first, or the store is away: the next round tries again
    }
  }

  @Override
  public List<IdempotencyRecord> findUncertain(Collection<Operation> operations, RecordKey after, int limit) {
    // a full page unless the records run out, whatever does not open: a short page tells the caller it is the end
    List<IdempotencyRecord> opened = new ArrayList<>();
    RecordKey from = after;
    while (opened.size() < limit) {
      int wanted = limit - opened.size();
      List<IdempotencyRecord> page = store.findUncertain(operations, from, wanted);
      opened.addAll(openAll(page));
      if (page.size() < wanted) {
        break;
      }
      from = page.get(page.size() - 1).key();
    }
    return opened;
  }

  @Override
  public int purgeExpired(Instant now, int limit) {
    return store.purgeExpired(now, limit);
  }

  @Override
  public IdempotencyAdmin admin() {
    IdempotencyAdmin admin = store.admin();
    return new IdempotencyAdmin() {
      @Override
      public List<IdempotencyRecord> list(RecordState state, RecordKey after, int limit) {
        List<IdempotencyRecord> page = new ArrayList<>();
        for (IdempotencyRecord record : admin.list(state, after, limit)) {
          IdempotencyRecord shown = record;
          try {
            shown = open(record);
          } catch (DecryptionException e) {
            // listed still sealed: the operator sees the record and can evict it; the listing does not fail
          }
          page.add(shown);
        }
        return page;
      }

      @Override
      public boolean evict(RecordKey key) {
        return admin.evict(key);
      }

      /** The resolution's answer is sealed like any kept answer before the store underneath keeps it. */
      @Override
      public Optional<AuditEntry> resolve(RecordKey key, long version, Resolution resolution) {
        if (resolution.response() == null) {
          return admin.resolve(key, version, resolution);
        }
        StoredResponse response = resolution.response();
        byte[] sealed = encryption.seal(encode(null, response), associatedData(key, response.status()));
        return admin.resolve(key, version, new Resolution(resolution.action(),
            StoredResponse.of(response.status(), Map.of(SEALED_HEADER, List.of("1")), sealed), resolution.actor(),
            resolution.reason(), resolution.at()));
      }

      @Override
      public List<AuditEntry> history(RecordKey key) {
        return admin.history(key);
      }
    };
  }

  @Override
  public String toString() {
    return "EncryptedIdempotencyStore[" + store.name() + ", " + encryption + "]";
  }

  /**
   * The records opened; one that does not open is left out (the listener has counted it), so that it cannot stop the
   * completer from resuming the others.
   */
  private List<IdempotencyRecord> openAll(List<IdempotencyRecord> records) {
    List<IdempotencyRecord> opened = new ArrayList<>(records.size());
    for (IdempotencyRecord record : records) {
      try {
        opened.add(open(record));
      } catch (DecryptionException e) {
        // reported by open(); an operator resolves or evicts it
      }
    }
    return opened;
  }

  private Checkpoint sealCheckpoint(RecordKey key, Checkpoint checkpoint) {
    String sealed = encryption.sealText(encodePairs(checkpoint.values()), checkpointData(key));
    Map<String, String> chunks = new LinkedHashMap<>();
    for (int i = 0, at = 0; at < sealed.length(); i++, at += CHUNK) {
      chunks.put(SEALED_CHECKPOINT + i, sealed.substring(at, Math.min(sealed.length(), at + CHUNK)));
    }
    if (chunks.size() > Checkpoint.MAX_VALUES) {
      throw new IllegalArgumentException("the checkpoint of " + key + " is too large to seal: "
          + sealed.length() + " characters sealed, at most " + (long) CHUNK * Checkpoint.MAX_VALUES);
    }
    return Checkpoint.of(chunks);
  }

  static boolean isSealed(Checkpoint checkpoint) {
    return checkpoint.get(SEALED_CHECKPOINT + 0) != null;
  }

  /** The sealed text of a checkpoint (its chunks joined), or null when the checkpoint is not sealed. */
  static String sealedCheckpointText(Checkpoint checkpoint) {
    if (!isSealed(checkpoint)) {
      return null;
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; checkpoint.get(SEALED_CHECKPOINT + i) != null; i++) {
      text.append(checkpoint.get(SEALED_CHECKPOINT + i));
    }
    return text.toString();
  }

  private Checkpoint openCheckpoint(RecordKey key, Checkpoint sealed) {
    String plain = encryption.openText(sealedCheckpointText(sealed), checkpointData(key));
    return Checkpoint.of(decodePairs(plain, "a sealed checkpoint opened, but its content is not a checkpoint"));
  }

  /** Names and values, each as its length in characters, a colon and itself: {@code 4:name3:abc}. */
  private static String encodePairs(Map<String, String> pairs) {
    StringBuilder plain = new StringBuilder(pairs.size() * 32);
    for (Map.Entry<String, String> e : pairs.entrySet()) {
      plain.append(e.getKey().length()).append(':').append(e.getKey()).append(e.getValue().length()).append(':')
          .append(e.getValue());
    }
    return plain.toString();
  }

  private static Map<String, String> decodePairs(String plain, String malformed) {
    Map<String, String> values = new LinkedHashMap<>();
    try {
      for (int at = 0; at < plain.length(); ) {
        String name = lengthPrefixed(plain, at);
        at = plain.indexOf(':', at) + 1 + name.length();
        String value = lengthPrefixed(plain, at);
        at = plain.indexOf(':', at) + 1 + value.length();
        values.put(name, value);
      }
    } catch (RuntimeException e) {
      throw new DecryptionException(DecryptionException.Reason.MALFORMED, null, malformed, e);
    }
    return values;
  }

  private static String lengthPrefixed(String text, int at) {
    int colon = text.indexOf(':', at);
    int length = Integer.parseInt(text.substring(at, colon));
    return text.substring(colon + 1, colon + 1 + length);
  }

  private static String checkpointData(RecordKey key) {
    return new String(associatedData(key, 0), UTF_8) + "\u0000checkpoint";
  }

  /**
   * The sealed text of a record's field hashes sealed on their own, or null when they are plaintext, empty, or travel
   * in the answer's envelope.
   */
  static String sealedFieldsText(Map<String, String> fields) {
    if (fields.size() != 1) {
      return null;
    }
    String text = fields.get(SEALED_FIELDS);
    return text != null && Encryption.isSealed(text) ? text : null;
  }

  /** Whether the record's answer envelope also holds its field hashes. */
  static boolean answerHoldsFields(IdempotencyRecord record) {
    return isSealed(record) && ANSWER_AND_FIELDS.equals(record.response().header(SEALED_HEADER));
  }

  private static String fieldsData(RecordKey key) {
    return new String(associatedData(key, 0), UTF_8) + "\u0000fields";
  }

  /** The answer's associated data with the format of what it holds, so that a changed header does not open. */
  private static byte[] answerAndFieldsData(RecordKey key, int status) {
    return (new String(associatedData(key, status), UTF_8) + "\u0000fields").getBytes(UTF_8);
  }

  /** Field hashes in name order, as {@link #encodePairs} writes them. */
  private static String encodeFields(Map<String, String> fields) {
    return encodePairs(new TreeMap<>(fields));
  }

  private static Map<String, String> decodeFields(String plain) {
    return decodePairs(plain, "sealed field hashes opened, but their content is not field hashes");
  }

  /** The field hashes in front of an answer: their count, then each name and hash as {@link #readString} reads. */
  private static Map<String, String> decodeFields(ByteBuffer in) {
    try {
      int count = in.getInt();
      if (count < 0 || count > in.remaining() / 8) {
        throw new IllegalArgumentException(count + " field hashes in " + in.remaining() + " bytes");
      }
      @SuppressWarnings("unchecked")
      Map.Entry<String, String>[] entries = new Map.Entry[count];
      for (int i = 0; i < count; i++) {
        entries[i] = Map.entry(readString(in), readString(in));
      }
      return Map.ofEntries(entries);
    } catch (RuntimeException e) {
      throw new DecryptionException(DecryptionException.Reason.MALFORMED, null,
          "a sealed answer opened, but its content is not a kept answer with field hashes", e);
    }
  }

  static byte[] associatedData(RecordKey key, int status) {
    String scope = key.scope().value();
    return ("idem.record.v1\u0000" + scope.length() + ':' + scope + '\u0000' + key.operation().name().length() + ':'
        + key.operation().name() + '\u0000' + key.key().value().length() + ':' + key.key().value() + '\u0000'
        + status).getBytes(UTF_8);
  }

  /**
   * Headers and body in one array: a count, then each name and value as a length and UTF-8 bytes, then the body. With
   * {@code fields}, their count and each name and hash the same way come first.
   */
  private static byte[] encode(Map<String, String> fields, StoredResponse response) {
    List<byte[]> strings = new ArrayList<>();
    int size = 4 + response.bodyLength();
    if (fields != null) {
      size += 4;
      for (Map.Entry<String, String> f : new TreeMap<>(fields).entrySet()) {
        byte[] name = f.getKey().getBytes(UTF_8);
        byte[] hash = f.getValue().getBytes(UTF_8);
        strings.add(name);
        strings.add(hash);
        size += 8 + name.length + hash.length;
      }
    }
    for (Map.Entry<String, List<String>> h : response.headers().entrySet()) {
      byte[] name = h.getKey().getBytes(UTF_8);
      strings.add(name);
      size += 8 + name.length;
      for (String value : h.getValue()) {
        byte[] v = value.getBytes(UTF_8);
        strings.add(v);
        size += 4 + v.length;
      }
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    int i = 0;
    if (fields != null) {
      out.putInt(fields.size());
      for (; i < 2 * fields.size(); i++) {
        out.putInt(strings.get(i).length).put(strings.get(i));
      }
    }
    out.putInt(response.headers().size());
    for (Map.Entry<String, List<String>> h : response.headers().entrySet()) {
      byte[] name = strings.get(i++);
      out.putInt(name.length).put(name).putInt(h.getValue().size());
      for (int j = 0; j < h.getValue().size(); j++) {
        byte[] v = strings.get(i++);
        out.putInt(v.length).put(v);
      }
    }
    out.put(response.body());
    return out.array();
  }

  /** The answer {@link #encode} wrote, from where {@code in} stands to its end. */
  private static StoredResponse decode(int status, ByteBuffer in) {
    try {
      int count = in.getInt();
      Map<String, List<String>> headers = new LinkedHashMap<>();
      for (int i = 0; i < count; i++) {
        String name = readString(in);
        int n = in.getInt();
        if (n < 0 || n > in.remaining()) {
          throw new IllegalArgumentException(n + " values in " + in.remaining() + " bytes");
        }
        List<String> values = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
          values.add(readString(in));
        }
        headers.put(name, values);
      }
      byte[] body = new byte[in.remaining()];
      in.get(body);
      return StoredResponse.of(status, headers, body);
    } catch (RuntimeException e) {
      throw new DecryptionException(DecryptionException.Reason.MALFORMED, null,
          "a sealed answer opened, but its content is not a kept answer", e);
    }
  }

  private static String readString(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException("a string of " + n + " bytes in " + in.remaining());
    }
    String s = new String(in.array(), in.position(), n, UTF_8);
    in.position(in.position() + n);
    return s;
  }
}
