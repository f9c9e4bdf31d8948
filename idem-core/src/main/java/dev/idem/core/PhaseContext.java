package dev.idem.core;

import dev.idem.core.spi.StoreTransaction;
import java.util.Optional;

/** What a phase sees while it runs. Valid only during the phase, on its thread. */
public interface PhaseContext {
  /** The record's identity. */
  RecordKey recordKey();

  /** The client's key. */
  default IdempotencyKey key() {
    return recordKey().key();
  }

  /**
   * The key for an external call named {@code name}, the same on every run of this record (retries, takeovers, the
   * completer), unique to the record, and carrying the record's own random nonce so that nobody outside can compute
   * it: see {@link IdempotencyRecord#derive}. Records claimed before nonces existed keep {@link RecordKey#derive}.
   * The engine's contexts always answer from the record; this default, without the record, is the nonce-less form.
   */
  default String derivedKey(String name) {
    return recordKey().derive(name);
  }

  /** The values committed by earlier phases (empty in the first phase). */
  Checkpoint checkpoint();

  /**
   * The request, when the phase runs for a client's request; empty when the completer resumes the operation.
   * Phases after the first must work from the {@link #checkpoint()} alone.
   */
  Optional<IdempotentRequest> request();

  /** Whether this run resumes an operation another worker started (a takeover after its lease expired). */
  boolean resumed();

  /**
   * The transaction this phase runs in, whose commit also moves the recovery point.
   *
   * @throws IllegalStateException in a phase declared {@code outside} a transaction
   */
  StoreTransaction transaction();
}
