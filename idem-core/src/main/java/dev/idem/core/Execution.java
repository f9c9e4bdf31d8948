package dev.idem.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What the executor decided for one request, and the answer to give. Immutable.
 *
 * <p>Exceptions thrown by the work are not represented here: they propagate to the caller after the key was
 * released.
 */
public final class Execution {

  /** The executor's decision. */
  public enum Outcome {
    /** The work ran and its response was kept. */
    STORED,
    /** A record existed with the same fingerprint; its stored response is returned. */
    REPLAYED,
    /** The work ran but its response is not kept (transient status): the key is free for the retry. */
    NOT_STORED,
    /** A record exists with another fingerprint: the key was reused for a different request. */
    PAYLOAD_MISMATCH,
    /** The first request with this key is still running. */
    IN_PROGRESS,
    /**
     * The key's record expired but is retained as a tombstone: the same request is not run again, and its answer is
     * no longer kept. See {@link OperationPolicy#retention()}.
     */
    KEY_EXPIRED,
    /**
     * The key's record is {@link RecordState#UNCERTAIN}: its outside effect could not be confirmed, so nothing runs;
     * a reconciler or an operator decides it. Not worth retrying until then.
     */
    UNCERTAIN
  }

  private final RecordKey key;
  private final Outcome outcome;
  private final StoredResponse response;
  private final List<String> differingFields;
  private final Duration retryAfter;
  private final Duration keyAge;
  private final Instant expiredAt;

  private Execution(RecordKey key, Outcome outcome, StoredResponse response, List<String> differingFields,
      Duration retryAfter, Duration keyAge) {
    this(key, outcome, response, differingFields, retryAfter, keyAge, null);
  }

  private Execution(RecordKey key, Outcome outcome, StoredResponse response, List<String> differingFields,
      Duration retryAfter, Duration keyAge, Instant expiredAt) {
    this.key = Objects.requireNonNull(key, "key");
    this.outcome = Objects.requireNonNull(outcome, "outcome");
    this.response = response;
    this.differingFields = List.copyOf(differingFields);
    this.retryAfter = retryAfter;
    this.keyAge = keyAge;
    this.expiredAt = expiredAt;
  }

  public static Execution stored(RecordKey key, StoredResponse response) {
    return new Execution(key, Outcome.STORED, Objects.requireNonNull(response), List.of(), null, Duration.ZERO);
  }

  public static Execution replayed(RecordKey key, StoredResponse response, Duration keyAge) {
    return new Execution(key, Outcome.REPLAYED, Objects.requireNonNull(response), List.of(), null, keyAge);
  }

  public static Execution notStored(RecordKey key, StoredResponse response) {
    return new Execution(key, Outcome.NOT_STORED, Objects.requireNonNull(response), List.of(), null, null);
  }

  public static Execution payloadMismatch(RecordKey key, List<String> differingFields) {
    return new Execution(key, Outcome.PAYLOAD_MISMATCH, null, differingFields, null, null);
  }

  public static Execution inProgress(RecordKey key, Duration retryAfter) {
    return new Execution(key, Outcome.IN_PROGRESS, null, List.of(), Objects.requireNonNull(retryAfter), null);
  }

  /** The key's record expired at {@code expiredAt} and is retained as a tombstone. */
  public static Execution keyExpired(RecordKey key, Instant expiredAt) {
    return new Execution(key, Outcome.KEY_EXPIRED, null, List.of(), null, null,
        Objects.requireNonNull(expiredAt, "expiredAt"));
  }

  /** The key's record is uncertain since {@code since} (its last write); nothing ran. */
  public static Execution uncertain(RecordKey key, Instant since) {
    return new Execution(key, Outcome.UNCERTAIN, null, List.of(), null, null,
        Objects.requireNonNull(since, "since"));
  }

  public RecordKey key() {
    return key;
  }

  public Outcome outcome() {
    return outcome;
  }

  /** The answer to give: present for STORED, REPLAYED and NOT_STORED; {@code null} otherwise. */
  public StoredResponse response() {
    return response;
  }

  /**
   * The answer, or an exception describing why there is none: {@link PayloadMismatchException} or
   * {@link RequestInProgressException} or {@link KeyExpiredException} or {@link OutcomeUncertainException}.
   */
  public StoredResponse responseOrThrow() {
    switch (outcome) {
      case PAYLOAD_MISMATCH:
        throw new PayloadMismatchException(key, differingFields);
      case IN_PROGRESS:
        throw new RequestInProgressException(key, retryAfter);
      case KEY_EXPIRED:
        throw new KeyExpiredException(key, expiredAt);
      case UNCERTAIN:
        throw new OutcomeUncertainException(key, expiredAt);
      default:
        return response;
    }
  }

  /** For PAYLOAD_MISMATCH: the top-level fields that differ, sorted; empty when unknown (non-JSON bodies). */
  public List<String> differingFields() {
    return differingFields;
  }

  /** For IN_PROGRESS: how long the caller should wait before retrying (whole seconds, at least one). */
  public Duration retryAfter() {
    return retryAfter;
  }

  /** For REPLAYED: how old the record is; zero for STORED; {@code null} otherwise. */
  public Duration keyAge() {
    return keyAge;
  }

  /**
   * For KEY_EXPIRED: when the key's answer expired; for UNCERTAIN: when the record became uncertain (its last
   * write); {@code null} otherwise.
   */
  public Instant expiredAt() {
    return expiredAt;
  }

  public boolean isReplay() {
    return outcome == Outcome.REPLAYED;
  }

  @Override
  public String toString() {
    return "Execution[" + key + ", " + outcome + (response == null ? "" : ", status " + response.status())
        + (differingFields.isEmpty() ? "" : ", differing " + differingFields)
        + (retryAfter == null ? "" : ", retryAfter " + retryAfter) + "]";
  }
}
