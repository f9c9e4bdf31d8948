package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprint;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The stored row for (scope, operation, key): state, fingerprint, response, lease, expiry and retention. Immutable.
 *
 * <p>Two windows: until {@link #expiresAt} the record answers retries (replay, mismatch, in progress); from then until
 * {@link #retainUntil} a final record is a tombstone ({@link #isRetained}) that refuses its key to a retry, so that a
 * late retry never runs the operation a second time; after that the key is free.
 *
 * @param key the record's identity
 * @param state its state; never {@code null} (an absent record is not represented)
 * @param fingerprint the fingerprint of the request that created it
 * @param response what a replay returns; present exactly when the state is final
 * @param recoveryPoint the last committed phase of a phased operation, or {@code null} before the first
 * @param checkpoint the values the committed phases recorded
 * @param leaseOwner who holds the lease, or {@code null} when nobody does
 * @param lockedUntil when the lease ends, or {@code null} for final records
 * @param version the fencing token: every write increments it, and a write succeeds only at the version it read
 * @param createdAt when the record was first written
 * @param updatedAt when it was last written
 * @param expiresAt the end of the TTL: until then the record answers retries; after it a final record is a tombstone
 *     until {@code retainUntil} (or gone, without a retention), and an in-progress one counts as absent once its lease
 *     has ended, unless it has committed phases ({@link #isExpired})
 * @param keyNonce the record's own random value, drawn when it is first claimed and never changed, that the keys it
 *     derives for outside calls carry ({@link #derive}), so that nobody outside can compute them; {@code null} for
 *     records claimed before it existed (they keep the old derivation) and for atomic records (they derive none)
 * @param retainUntil when the tombstone of a final record ends and its key is free again: {@code expiresAt} plus the
 *     operation's retention; {@code null} for records written before retention existed, which are gone at
 *     {@code expiresAt}
 * @param resumeAttempts how many times a phase after the recovery point failed on a resumption (a client's retry or
 *     the completer) since the record was claimed or last sent back to work by an operator; past the operation's
 *     resume cap the record becomes {@link RecordState#UNCERTAIN}. Zero for records written before it existed
 */
public record IdempotencyRecord(
    RecordKey key,
    RecordState state,
    Fingerprint fingerprint,
    StoredResponse response,
    String recoveryPoint,
    Checkpoint checkpoint,
    String leaseOwner,
    Instant lockedUntil,
    long version,
    Instant createdAt,
    Instant updatedAt,
    Instant expiresAt,
    String keyNonce,
    Instant retainUntil,
    int resumeAttempts) {

  /** The length of a key nonce drawn by {@link #claimed}: 32 hex characters, 128 random bits. */
  public static final int KEY_NONCE_LENGTH = 32;
  /** The longest key nonce a record accepts (the store's column holds 64 characters). */
  public static final int MAX_KEY_NONCE_LENGTH = 64;

  private static final SecureRandom RANDOM = new SecureRandom();

  public IdempotencyRecord {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(checkpoint, "checkpoint");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
    if (state.isFinal() && response == null) {
      throw new IllegalArgumentException("a " + state + " record needs a response");
    }
    if (!state.isFinal() && response != null) {
      throw new IllegalArgumentException("a " + state + " record has no response");
    }
    if (resumeAttempts < 0) {
      throw new IllegalArgumentException("resumeAttempts must not be negative, got " + resumeAttempts);
    }
    if (version < 1) {
      throw new IllegalArgumentException("version starts at 1, got " + version);
    }
    if (keyNonce != null && (keyNonce.isEmpty() || keyNonce.length() > MAX_KEY_NONCE_LENGTH)) {
      throw new IllegalArgumentException("a key nonce has 1 to " + MAX_KEY_NONCE_LENGTH + " characters, got "
          + keyNonce.length());
    }
    if (retainUntil != null && retainUntil.isBefore(expiresAt)) {
      throw new IllegalArgumentException("retainUntil " + retainUntil + " is before expiresAt " + expiresAt);
    }
  }

  /** A record that has never failed a resumption, as records written before the counter existed are read back. */
  public IdempotencyRecord(RecordKey key, RecordState state, Fingerprint fingerprint, StoredResponse response,
      String recoveryPoint, Checkpoint checkpoint, String leaseOwner, Instant lockedUntil, long version,
      Instant createdAt, Instant updatedAt, Instant expiresAt, String keyNonce, Instant retainUntil) {
    this(key, state, fingerprint, response, recoveryPoint, checkpoint, leaseOwner, lockedUntil, version, createdAt,
        updatedAt, expiresAt, keyNonce, retainUntil, 0);
  }

  /** A record without a retention, as records written before retention existed are read back. */
  public IdempotencyRecord(RecordKey key, RecordState state, Fingerprint fingerprint, StoredResponse response,
      String recoveryPoint, Checkpoint checkpoint, String leaseOwner, Instant lockedUntil, long version,
      Instant createdAt, Instant updatedAt, Instant expiresAt, String keyNonce) {
    this(key, state, fingerprint, response, recoveryPoint, checkpoint, leaseOwner, lockedUntil, version, createdAt,
        updatedAt, expiresAt, keyNonce, null);
  }

  /** A record without a key nonce, as records claimed before nonces existed are read back. */
  public IdempotencyRecord(RecordKey key, RecordState state, Fingerprint fingerprint, StoredResponse response,
      String recoveryPoint, Checkpoint checkpoint, String leaseOwner, Instant lockedUntil, long version,
      Instant createdAt, Instant updatedAt, Instant expiresAt) {
    this(key, state, fingerprint, response, recoveryPoint, checkpoint, leaseOwner, lockedUntil, version, createdAt,
        updatedAt, expiresAt, null, null);
  }

  /** A final record without a retention: gone at its expiry. See the overload with a retention. */
  public static IdempotencyRecord finished(
      RecordKey key, Fingerprint fingerprint, StoredResponse response, RecordState state, Instant now, Duration ttl) {
    return new IdempotencyRecord(
        key, state, fingerprint, response, null, Checkpoint.empty(), null, null, 1, now, now, now.plus(ttl), null);
  }

  /**
   * A record that is final from its first write (atomic mode inserts these at the end of the transaction), kept as a
   * tombstone for {@code retention} past its expiry.
   */
  public static IdempotencyRecord finished(RecordKey key, Fingerprint fingerprint, StoredResponse response,
      RecordState state, Instant now, Duration ttl, Duration retention) {
    Instant expiresAt = now.plus(ttl);
    return new IdempotencyRecord(key, state, fingerprint, response, null, Checkpoint.empty(), null, null, 1, now, now,
        expiresAt, null, expiresAt.plus(retention));
  }

  /** A claimed record without a retention: gone at its expiry. See the overload with a retention. */
  public static IdempotencyRecord claimed(
      RecordKey key, Fingerprint fingerprint, String owner, Instant now, Duration lease, Duration ttl) {
    return new IdempotencyRecord(key, RecordState.IN_PROGRESS, fingerprint, null, null, Checkpoint.empty(), owner,
        now.plus(lease), 1, now, now, now.plus(ttl), newKeyNonce());
  }

  /**
   * A freshly claimed record under a lease (phased and leased modes), with a new random key nonce; once final, kept
   * as a tombstone for {@code retention} past its expiry.
   */
  public static IdempotencyRecord claimed(RecordKey key, Fingerprint fingerprint, String owner, Instant now,
      Duration lease, Duration ttl, Duration retention) {
    Instant expiresAt = now.plus(ttl);
    return new IdempotencyRecord(key, RecordState.IN_PROGRESS, fingerprint, null, null, Checkpoint.empty(), owner,
        now.plus(lease), 1, now, now, expiresAt, newKeyNonce(), expiresAt.plus(retention));
  }

  /** A new key nonce: {@value #KEY_NONCE_LENGTH} hex characters from a {@link SecureRandom}. */
  public static String newKeyNonce() {
    byte[] bytes = new byte[KEY_NONCE_LENGTH / 2];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /**
   * The key for a call named {@code name} this record makes to another system: {@link RecordKey#derive(String,
   * String)} with this record's key nonce. The same on every run of this record (retries, takeovers, the completer),
   * different for every other record, and not computable by anyone who cannot read the record.
   */
  public String derive(String name) {
    return key.derive(name, keyNonce);
  }

  /**
   * Whether the record counts as absent: its TTL has passed, unless it is uncertain, or in progress with committed
   * phases or under a live lease. A record with committed phases is never dropped silently (a new execution would
   * repeat them): it stays until a retry, the completer, a reconciler or an operator finishes it, and purge leaves it
   * alone. An in-progress record whose lease has not ended yet (a takeover shortly before the TTL leases it past the
   * TTL) is not dropped either, since its holder may still be running the work: it counts as absent only once the
   * lease has ended.
   */
  public boolean isExpired(Instant now) {
    return !expiresAt.isAfter(now) && state != RecordState.UNCERTAIN
        && !(state == RecordState.IN_PROGRESS && (recoveryPoint != null || !isLeaseExpired(now)));
  }

  /**
   * Whether the record is a tombstone at {@code now}: final and expired, but still inside its retention. Its key stays
   * taken: the same request is refused as expired, another as a mismatch. In-progress records are never retained
   * (they keep the rules of {@link #isExpired}). A final record last written at or after its expiry counts as expired
   * here even on a clock that says otherwise: it is a tombstone that a purge on a clock ahead of this one already
   * shrank (its response is gone), or it was finished after its TTL.
   */
  public boolean isRetained(Instant now) {
    return state.isFinal() && retainUntil != null && retainUntil.isAfter(now)
        && (isExpired(now) || !updatedAt.isBefore(expiresAt));
  }

  /** Whether the key is free at {@code now}: the record expired and is not {@linkplain #isRetained retained}. */
  public boolean isGone(Instant now) {
    return isExpired(now) && !isRetained(now);
  }

  /**
   * The tombstone of this final record, as purge writes it past the expiry: key, state (the outcome), fingerprint
   * hash, times and retention; the response keeps its status only, and the field hashes, checkpoint, recovery point
   * and key nonce go. The next version.
   */
  public IdempotencyRecord tombstone(Instant now) {
    if (!state.isFinal()) {
      throw new IllegalStateException("only a final record becomes a tombstone, not an " + state + " one");
    }
    return new IdempotencyRecord(key, state, Fingerprint.ofHash(fingerprint.hash()),
        StoredResponse.of(response.status(), new byte[0]), null, Checkpoint.empty(), null, null, version + 1,
        createdAt, now, expiresAt, null, retainUntil, 0);
  }

  /** Whether an in-progress record's lease has run out, so another worker may take it over. */
  public boolean isLeaseExpired(Instant now) {
    return state == RecordState.IN_PROGRESS && (lockedUntil == null || !lockedUntil.isAfter(now));
  }

  /** The next version of this record under a new lease, as a takeover or a phase writes it. */
  public IdempotencyRecord withLease(String owner, Instant until, Instant now) {
    return new IdempotencyRecord(key, state, fingerprint, response, recoveryPoint, checkpoint, owner, until,
        version + 1, createdAt, now, expiresAt, keyNonce, retainUntil, resumeAttempts);
  }

  /** The next version after a committed phase. */
  public IdempotencyRecord withRecoveryPoint(String phase, Checkpoint values, Instant until, Instant now) {
    return new IdempotencyRecord(key, state, fingerprint, response, phase, values, leaseOwner, until,
        version + 1, createdAt, now, expiresAt, keyNonce, retainUntil, resumeAttempts);
  }

  /** Every component but the key nonce, which is shown only as present or absent: it must not reach a log. */
  @Override
  public String toString() {
    return "IdempotencyRecord[key=" + key + ", state=" + state + ", fingerprint=" + fingerprint + ", response="
        + response + ", recoveryPoint=" + recoveryPoint + ", checkpoint=" + checkpoint + ", leaseOwner=" + leaseOwner
        + ", lockedUntil=" + lockedUntil + ", version=" + version + ", createdAt=" + createdAt + ", updatedAt="
        + updatedAt + ", expiresAt=" + expiresAt + ", keyNonce=" + (keyNonce == null ? "none" : "(hidden)")
        + ", retainUntil=" + retainUntil + ", resumeAttempts=" + resumeAttempts + "]";
  }

  /** The next version, final. The lease is cleared. */
  public IdempotencyRecord finish(RecordState finalState, StoredResponse finalResponse, Instant now) {
    if (!finalState.isFinal()) {
      throw new IllegalArgumentException("finish needs COMPLETED or FAILED, got " + finalState);
    }
    return new IdempotencyRecord(key, finalState, fingerprint, finalResponse, recoveryPoint, checkpoint, null, null,
        version + 1, createdAt, now, expiresAt, keyNonce, retainUntil, resumeAttempts);
  }

  /**
   * The next version after a resumption whose phase failed, as the engine writes it when it gives the lease up: the
   * failed resumption is counted and the lease ends after {@code hold}; once the count reaches the policy's
   * {@linkplain OperationPolicy#resumeCapAttempts() attempts}, or the record is as old as its
   * {@linkplain OperationPolicy#resumeCapAge() age} cap, the record becomes {@link RecordState#UNCERTAIN} instead.
   */
  public IdempotencyRecord afterFailedResume(OperationPolicy policy, Duration hold, Instant now) {
    if (state != RecordState.IN_PROGRESS) {
      throw new IllegalStateException("only an IN_PROGRESS record is resumed, not an " + state + " one");
    }
    int attempts = resumeAttempts + 1;
    boolean capped = attempts >= policy.resumeCapAttempts()
        || !Duration.between(createdAt, now).minus(policy.resumeCapAge()).isNegative();
    if (capped && recoveryPoint != null) {
      return new IdempotencyRecord(key, RecordState.UNCERTAIN, fingerprint, null, recoveryPoint, checkpoint, null,
          null, version + 1, createdAt, now, expiresAt, keyNonce, retainUntil, attempts);
    }
    return new IdempotencyRecord(key, state, fingerprint, null, recoveryPoint, checkpoint, null, now.plus(hold),
        version + 1, createdAt, now, expiresAt, keyNonce, retainUntil, attempts);
  }

  /**
   * The next version of this uncertain record once {@code resolution} decides it: final with the resolution's
   * response (COMPLETED or FAILED), or, for {@link Resolution.Action#RETRY}, back in progress with no lease (its lease
   * counts as expired, so the completer or a retry resumes it at once) and its resume count reset.
   *
   * @throws IllegalStateException when the record is not uncertain
   */
  public IdempotencyRecord resolve(Resolution resolution) {
    if (state != RecordState.UNCERTAIN) {
      throw new IllegalStateException("only an UNCERTAIN record is resolved; " + key + " is " + state);
    }
    Instant now = resolution.at();
    return switch (resolution.action()) {
      case COMPLETE -> finish(RecordState.COMPLETED, resolution.response(), now);
      case FAIL -> finish(RecordState.FAILED, resolution.response(), now);
      case RETRY -> new IdempotencyRecord(key, RecordState.IN_PROGRESS, fingerprint, null, recoveryPoint, checkpoint,
          null, now, version + 1, createdAt, now, expiresAt, keyNonce, retainUntil, 0);
    };
  }

  /**
   * The same record with another response (same version), as a store decorator that seals or opens responses passes
   * it on. Only for a final record.
   */
  public IdempotencyRecord withResponse(StoredResponse other) {
    if (!state.isFinal()) {
      throw new IllegalStateException("only a final record has a response, not an " + state + " one");
    }
    return new IdempotencyRecord(key, state, fingerprint, other, recoveryPoint, checkpoint, leaseOwner, lockedUntil,
        version, createdAt, updatedAt, expiresAt, keyNonce, retainUntil, resumeAttempts);
  }

  /**
   * The same record with another fingerprint (same version), as a store decorator that seals or opens its field
   * hashes passes it on. The overall hash must stay the same.
   */
  public IdempotencyRecord withFingerprint(Fingerprint other) {
    if (!other.hash().equals(fingerprint.hash())) {
      throw new IllegalArgumentException("a record's fingerprint hash never changes");
    }
    return new IdempotencyRecord(key, state, other, response, recoveryPoint, checkpoint, leaseOwner, lockedUntil,
        version, createdAt, updatedAt, expiresAt, keyNonce, retainUntil, resumeAttempts);
  }

  /**
   * The same record with other checkpoint values (same version), as a store decorator that seals or opens them
   * passes it on.
   */
  public IdempotencyRecord withCheckpoint(Checkpoint other) {
    return new IdempotencyRecord(key, state, fingerprint, response, recoveryPoint, other, leaseOwner, lockedUntil,
        version, createdAt, updatedAt, expiresAt, keyNonce, retainUntil, resumeAttempts);
  }
}
