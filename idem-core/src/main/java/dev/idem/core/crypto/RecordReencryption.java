package dev.idem.core.crypto;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoreException;
import dev.idem.core.spi.IdempotencyStore;
import java.time.Clock;
import java.util.List;
import java.util.Objects;

/**
 * Re-seals, under the current key, the kept answers, field hashes and checkpoints still sealed under an older key
 * (and seals field hashes an earlier version left in the clear next to a sealed answer), so that the older
 * key can leave the keyring before every record sealed under it has expired; optionally it also seals what was written
 * before encryption was turned on. It walks the final and the uncertain records in key order, in bounded batches, and
 * counts the records in progress still under an older key without touching them (they belong to their worker: run it
 * again once they have finished); each record is re-sealed
 * in its own short transaction by an update conditional on the version it read, so claims, replays and purge go on
 * meanwhile, and a record that changed in between is left to the next pass. A re-seal writes the next version but
 * keeps the record's {@code updatedAt}: it is the record's own time (when it became uncertain, whether it was finished
 * before its expiry), not the walk's. Not thread-safe: one walk at a time.
 *
 * <pre>{@code
 * RecordReencryption walk = RecordReencryption.of(encryptedStore, Clock.systemUTC());
 * RecordReencryption.Pass pass;
 * do {
 *   pass = walk.next(500);
 * } while (!pass.done());
 * // or: RecordReencryption.Pass all = walk.toTheEnd(500);
 * }</pre>
 */
public final class RecordReencryption {
  private static final List<RecordState> STATES =
      List.of(RecordState.COMPLETED, RecordState.FAILED, RecordState.UNCERTAIN, RecordState.IN_PROGRESS);

  /**
   * What one batch did: records read, re-sealed under the current key, sealed for the first time (plaintext before),
   * left alone because they changed meanwhile, that could not be opened (counted and left as they are), and records
   * in progress still sealed under an older key (left to their worker: run the walk again once they have finished);
   * and whether the walk has reached the end. An older key may leave the keyring only after a walk that found
   * nothing changed, unreadable or in progress under it.
   */
  public record Pass(int scanned, int resealed, int sealed, int changed, int unreadable, int inProgress,
      boolean done) {}

  private final EncryptedIdempotencyStore store;
  private final IdempotencyStore raw;
  private final Clock clock;
  private boolean sealPlaintext;
  private int stateIndex;
  private RecordKey after;

  private RecordReencryption(EncryptedIdempotencyStore store, Clock clock) {
    this.store = Objects.requireNonNull(store, "store");
    this.raw = store.unwrap();
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** A walk over the records of {@code store} (as {@code idem.store()} returns it when encryption is on). */
  public static RecordReencryption of(IdempotencyStore store, Clock clock) {
    if (!(store instanceof EncryptedIdempotencyStore)) {
      throw new IllegalArgumentException("store '" + store.name() + "' does not seal its answers: build Idem with"
          + " encryption(...) and pass idem.store()");
    }
    return new RecordReencryption((EncryptedIdempotencyStore) store, clock);
  }

  /**
   * Runs the rest of the walk in batches of {@code limit} (each as {@link #next} runs it) and returns what they did,
   * summed, with {@code done} true.
   */
  public Pass toTheEnd(int limit) {
    int scanned = 0;
    int resealed = 0;
    int sealed = 0;
    int changed = 0;
    int unreadable = 0;
    int inProgress = 0;
    Pass pass;
    do {
      pass = next(limit);
      scanned += pass.scanned();
      resealed += pass.resealed();
      sealed += pass.sealed();
      changed += pass.changed();
      unreadable += pass.unreadable();
      inProgress += pass.inProgress();
    } while (!pass.done());
    return new Pass(scanned, resealed, sealed, changed, unreadable, inProgress, true);
  }

  /** Also seals answers kept in plaintext, written before encryption was turned on (default: only re-seals). */
  public RecordReencryption sealPlaintext(boolean seal) {
    this.sealPlaintext = seal;
    return this;
  }

  /** Handles up to {@code limit} records (1..10,000) after where the last batch stopped. */
  public Pass next(int limit) {
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be 1..10000, got " + limit);
    }
    if (stateIndex >= STATES.size()) {
      return new Pass(0, 0, 0, 0, 0, 0, true);
    }
    List<IdempotencyRecord> page = raw.admin().list(STATES.get(stateIndex), after, limit);
    String current = store.currentKeyId();
    int resealed = 0;
    int sealed = 0;
    int changed = 0;
    int unreadable = 0;
    int inProgress = 0;
    for (IdempotencyRecord record : page) {
      String checkpoint = EncryptedIdempotencyStore.sealedCheckpointText(record.checkpoint());
      boolean answerSealed = EncryptedIdempotencyStore.isSealed(record);
      // when the answer's envelope holds the field hashes, that copy is the one read: it alone counts
      boolean fieldsInAnswer = EncryptedIdempotencyStore.answerHoldsFields(record);
      String fields = fieldsInAnswer ? null
          : EncryptedIdempotencyStore.sealedFieldsText(record.fingerprint().fieldHashes());
      boolean isSealed = answerSealed || checkpoint != null || fields != null;
      boolean plainFields = store.sealsFieldHashes() && !fieldsInAnswer && fields == null
          && !record.fingerprint().fieldHashes().isEmpty();
      boolean staleKey;
      try {
        staleKey = answerSealed && !current.equals(Encryption.keyIdOf(record.response().body()))
            || checkpoint != null && !current.equals(Encryption.keyIdOf(checkpoint))
            || fields != null && !current.equals(Encryption.keyIdOf(fields));
      } catch (DecryptionException e) {
        unreadable++;
        continue;
      }
      boolean plaintext = sealPlaintext && (plainFields || hasPlaintext(record, answerSealed, checkpoint != null));
      // field hashes in the clear next to what is sealed: written by a version that sealed answers only
      boolean fieldsLeftInClear = isSealed && plainFields;
      if (!staleKey && !plaintext && !fieldsLeftInClear) {
        continue;
      }
      if (record.state() == RecordState.IN_PROGRESS) {
        // its worker writes it next (sealing what is in the clear); a re-seal here would fence the worker out
        if (staleKey || plaintext) {
          inProgress++;
        }
        continue;
      }
      IdempotencyRecord opened;
      try {
        opened = store.open(record);
      } catch (DecryptionException e) {
        unreadable++;
        continue;
      }
      // the next version, last written when it was: updatedAt is the record's own time (an uncertain record's
      // uncertain_since, a final record's completion, which says whether it ended before its expiry), not the re-seal's
      IdempotencyRecord next = opened.withLease(null, null, opened.updatedAt());
      boolean written;
      try {
        written = raw.inTransaction(tx -> raw.update(tx, store.seal(next)));
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new StoreException(raw.name(), "re-sealing " + record.key() + " failed", e);
      }
      if (!written) {
        changed++;
      } else if (isSealed) {
        resealed++;
      } else {
        sealed++;
      }
    }
    if (page.size() < limit) {
      stateIndex++;
      after = null;
    } else {
      after = page.get(page.size() - 1).key();
    }
    return new Pass(page.size(), resealed, sealed, changed, unreadable, inProgress, stateIndex >= STATES.size());
  }

  /** Whether the answer or the checkpoint, where not sealed, holds something. */
  private boolean hasPlaintext(IdempotencyRecord record, boolean answerSealed, boolean checkpointSealed) {
    boolean answer = !answerSealed && record.response() != null && !record.isExpired(clock.instant())
        && record.response().bodyLength() + record.response().headers().size() > 0;
    return answer || !checkpointSealed && !record.checkpoint().isEmpty();
  }
}
