package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.StoreTransaction;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One idempotent unit of work that is not an HTTP request: a method, a message handler, a scheduled job. It names a
 * key, a scope and an operation ({@link RecordKey}) and, optionally, what the fingerprint covers; its return value
 * goes through a {@link Codec} and is kept, so that a duplicate gets the same value back, decoded, without running
 * the work again. Immutable: every setter returns a new call. Get one from {@link Idem#call(RecordKey)}.
 *
 * <pre>{@code
 * Receipt receipt = idem.call(RecordKey.of(tenant, "orders.place", command.id()))
 *     .fingerprintJson(commandJson)
 *     .keepFailures(e -> e instanceof OutOfStockException)
 *     .atomic(receiptCodec, tx -> placeOrder(tx.unwrap(Connection.class), command))
 *     .value();
 * }</pre>
 *
 * <p>What a call answers, as an HTTP route would:
 *
 * <ul>
 *   <li>the value of the first execution, kept ({@code null} included); a duplicate with the same fingerprint gets
 *       it back ({@link Result#replayed()});
 *   <li>an exception the caller declared deterministic ({@link #keepFailures}) is kept too (class name, message and
 *       an optional payload) and thrown again to the first caller; a duplicate gets a
 *       {@link ReplayedFailureException} carrying them. Every other exception is transient: the work's transaction
 *       rolls back (atomic) or its lease is given up (leased), the key is free, and the exception propagates as it
 *       is (a checked one wrapped in {@link WorkFailedException}). By default no exception is kept: a failure kept by
 *       mistake would refuse every retry of a request that might have succeeded;
 *   <li>a duplicate with another fingerprint: {@link PayloadMismatchException}; one that arrives while the first is
 *       in flight: {@link RequestInProgressException} with the lease left, or, under the operation's
 *       {@link OperationPolicy.Builder#waitInFlight waitInFlight} bound, the replay once the first finishes; a key
 *       past its TTL but still retained: {@link KeyExpiredException}; an uncertain record:
 *       {@link OutcomeUncertainException}.
 * </ul>
 *
 * <p>The operation's policy ({@link Idem.Builder#policy}) applies: TTL, retention, lease, in-flight wait, which
 * JSON fields the fingerprint covers and the largest kept value. Kept values are sealed at rest like any kept answer
 * when the {@code Idem} has {@link Idem.Builder#encryption encryption}.
 *
 * <p>Phased mode is not offered here: its steps, checkpoints and the completer that resumes them after a crash need
 * a registered {@link PhasedOperation}, which a single call cannot express (the completer could not call it again:
 * its arguments are not kept). Phased work stays with {@link Idem#phased}.
 */
public final class IdempotentCall {
  /** The status a kept value is stored under. */
  static final int VALUE = 200;
  /** The status a kept {@code null} (or a {@code void} method's completion) is stored under. */
  static final int NO_VALUE = 204;
  /** The status a kept deterministic failure is stored under; 4xx makes the record FAILED. */
  static final int FAILURE = 422;
  /** The media type of a kept failure. */
  static final String FAILURE_TYPE = "application/x-idem-failure";
  /** The longest exception message kept, in characters. */
  static final int MAX_MESSAGE = 1000;
  private static final int FAILURE_FORMAT = 1;

  private final Idem idem;
  private final RecordKey key;
  private final byte[] input;
  private final String inputType;
  private final Fingerprint fingerprint;
  private final Predicate<? super Throwable> deterministic;
  private final Function<? super Throwable, byte[]> payload;
  private final boolean firstAttempt;

  private IdempotentCall(Idem idem, RecordKey key, byte[] input, String inputType, Fingerprint fingerprint,
      Predicate<? super Throwable> deterministic, Function<? super Throwable, byte[]> payload, boolean firstAttempt) {
    this.idem = idem;
    this.key = key;
    this.input = input;
    this.inputType = inputType;
    this.fingerprint = fingerprint;
    this.deterministic = deterministic;
    this.payload = payload;
    this.firstAttempt = firstAttempt;
  }

  static IdempotentCall of(Idem idem, RecordKey key) {
    return new IdempotentCall(Objects.requireNonNull(idem, "idem"), Objects.requireNonNull(key, "key"), new byte[0],
        "application/json", null, failure -> false, failure -> null, false);
  }

  /** The transactional work of an atomic call. */
  @FunctionalInterface
  public interface InTransaction<T> {
    /**
     * Does the work with the store's transaction (a JDBC store's unwraps to its {@code Connection}, which is the
     * caller's own when the caller bound it) and returns the value to keep. Throwing rolls the work back.
     */
    T call(StoreTransaction tx) throws Exception;
  }

  /** What a call answered: the value, and whether it was replayed from an earlier execution. */
  public static final class Result<T> {
    private final T value;
    private final Execution execution;

    Result(T value, Execution execution) {
      this.value = value;
      this.execution = execution;
    }

    /** The value the first execution returned; {@code null} when it returned none. */
    public T value() {
      return value;
    }

    /** Whether the work did not run this time: the value is an earlier execution's, decoded. */
    public boolean replayed() {
      return execution.isReplay();
    }

    /** The executor's decision, with the record key and the kept answer as stored. */
    public Execution execution() {
      return execution;
    }
  }

  public RecordKey key() {
    return key;
  }

  /**
   * This call with a fingerprint over {@code input}: a duplicate with other input is refused
   * ({@link PayloadMismatchException}). JSON types ({@code application/json}, {@code *+json}) are canonicalised and
   * the operation's fingerprint policy applies (JSON Pointers to include or exclude); other types are hashed raw.
   * Without one, every call with the key counts as the same request.
   */
  public IdempotentCall fingerprint(byte[] input, String contentType) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(contentType, "contentType");
    return new IdempotentCall(idem, key, input.clone(), contentType, null, deterministic, payload, firstAttempt);
  }

  /** This call with a fingerprint over a JSON document; see {@link #fingerprint(byte[], String)}. */
  public IdempotentCall fingerprintJson(byte[] json) {
    return fingerprint(json, "application/json");
  }

  /** This call with a fingerprint the caller computed. */
  public IdempotentCall fingerprint(Fingerprint fingerprint) {
    return new IdempotentCall(idem, key, new byte[0], null, Objects.requireNonNull(fingerprint, "fingerprint"),
        deterministic, payload, firstAttempt);
  }

  /**
   * This call keeping the failures {@code deterministic} accepts: the same input would fail the same way again (a
   * validation error, an insufficient balance). Such a failure is kept and replayed as a
   * {@link ReplayedFailureException}; every other failure frees the key for a retry.
   */
  public IdempotentCall keepFailures(Predicate<? super Throwable> deterministic) {
    return keepFailures(deterministic, failure -> null);
  }

  /**
   * As {@link #keepFailures(Predicate)}, keeping with each failure the bytes {@code payload} gives for it
   * ({@code null}: none), which a duplicate reads with {@link ReplayedFailureException#payload(Codec)}.
   */
  public IdempotentCall keepFailures(Predicate<? super Throwable> deterministic,
      Function<? super Throwable, byte[]> payload) {
    return new IdempotentCall(idem, key, input, inputType, fingerprint,
        Objects.requireNonNull(deterministic, "deterministic"), Objects.requireNonNull(payload, "payload"),
        firstAttempt);
  }

  /**
   * This call made as the caller's attempt number {@code attempt} (1 for the first) with the key: an atomic first
   * attempt skips the look-up before the work and lets the record's unique key decide
   * ({@link IdempotentRequest#firstAttempt(boolean)}); later attempts look the record up first, so a retry after the
   * first committed replays without running the work. Without it, every call looks up first (unless the operation's
   * policy says otherwise).
   *
   * @throws IllegalArgumentException when {@code attempt} is less than 1
   */
  public IdempotentCall attempt(int attempt) {
    if (attempt < 1) {
      throw new IllegalArgumentException("attempt must be 1 or more, got " + attempt);
    }
    return new IdempotentCall(idem, key, input, inputType, fingerprint, deterministic, payload, attempt == 1);
  }

  /**
   * Runs {@code work} in one store transaction with the record's write ({@link Idem#atomic}): the value and the
   * work's writes commit together, or neither does. A caller that bound its own connection to a JDBC store
   * ({@code JdbcIdempotencyStore.useConnection}) joins its own transaction, which the caller then commits.
   */
  public <T> Result<T> atomic(Codec<T> codec, InTransaction<T> work) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(work, "work");
    IdempotentRequest request = request();
    Execution execution;
    try {
      execution = idem.atomic(request, tx -> answer(codec, work.call(tx)));
    } catch (RuntimeException e) {
      return keptOrThrown(codec, e, false);
    }
    return result(codec, execution);
  }

  /**
   * Claims the key with a lease, runs {@code work} outside any transaction, then keeps its value ({@link Idem#leased}),
   * for stores without transactions or work that must not hold one. Weaker than {@link #atomic}: work that outlives
   * its lease may run twice.
   */
  public <T> Result<T> leased(Codec<T> codec, Callable<T> work) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(work, "work");
    Execution execution;
    try {
      execution = idem.leased(request(), k -> answer(codec, work.call()));
    } catch (RuntimeException e) {
      return keptOrThrown(codec, e, true);
    }
    return result(codec, execution);
  }

  /**
   * Keeps the deterministic {@code failure} of work that ran, and rolled back, outside this call (a framework that
   * owns the transaction runs the work with {@link #atomic} without {@link #keepFailures}, lets the transaction roll
   * back, then keeps the failure here, in a store transaction of its own).
   *
   * @return empty when the failure is now the key's answer (or could not be kept because another execution holds the
   *     key): the caller throws {@code failure}; present when another execution's answer was kept first
   * @throws ReplayedFailureException when that earlier answer is a kept failure
   */
  public <T> Optional<Result<T>> keepFailure(Codec<T> codec, Throwable failure) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(failure, "failure");
    StoredResponse kept = failure(failure);
    Execution execution = idem.store().transactional() ? idem.atomic(request(), tx -> kept)
        : idem.leased(request(), k -> kept);
    if (execution.outcome() == Execution.Outcome.STORED || execution.outcome() == Execution.Outcome.NOT_STORED
        || execution.outcome() == Execution.Outcome.IN_PROGRESS) {
      return Optional.empty();
    }
    return Optional.of(result(codec, execution));
  }

  private IdempotentRequest request() {
    IdempotentRequest request = fingerprint != null ? IdempotentRequest.withFingerprint(key, fingerprint)
        : IdempotentRequest.of(key, input, inputType);
    return firstAttempt ? request.firstAttempt(true) : request;
  }

  /**
   * The work threw: a deterministic failure is kept (in a store transaction of its own, the work's having rolled
   * back) and thrown again; a transient one is thrown at once. Returns only when another execution's answer was kept
   * first, which is then the key's answer.
   */
  private <T> Result<T> keptOrThrown(Codec<T> codec, RuntimeException thrown, boolean leased) {
    Throwable failure = thrown instanceof WorkFailedException && thrown.getCause() != null ? thrown.getCause()
        : thrown;
    if (failure instanceof IdemException && !(thrown instanceof WorkFailedException)) {
      throw thrown;
    }
    if (!deterministic.test(failure)) {
      throw thrown;
    }
    StoredResponse kept = failure(failure);
    Execution execution;
    try {
      execution = leased ? idem.leased(request(), k -> kept) : idem.atomic(request(), tx -> kept);
    } catch (RuntimeException keeping) {
      thrown.addSuppressed(keeping);
      throw thrown;
    }
    if (execution.outcome() == Execution.Outcome.STORED || execution.outcome() == Execution.Outcome.NOT_STORED
        || execution.outcome() == Execution.Outcome.IN_PROGRESS) {
      throw thrown;
    }
    return result(codec, execution);
  }

  private <T> StoredResponse answer(Codec<T> codec, T value) {
    if (value == null) {
      return StoredResponse.of(NO_VALUE, new byte[0]);
    }
    byte[] bytes = codec.encode(value);
    if (bytes == null) {
      throw new IllegalStateException("codec " + codec + " encoded a value of " + key.operation() + " as null");
    }
    return StoredResponse.of(VALUE, Map.of("content-type", List.of(codec.contentType())), bytes);
  }

  private StoredResponse failure(Throwable failure) {
    byte[] extra = payload.apply(failure);
    String message = failure.getMessage();
    if (message != null && message.length() > MAX_MESSAGE) {
      message = message.substring(0, MAX_MESSAGE);
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(FAILURE_FORMAT);
      writeString(out, failure.getClass().getName());
      out.writeBoolean(message != null);
      writeString(out, message == null ? "" : message);
      out.writeInt(extra == null ? 0 : extra.length);
      if (extra != null) {
        out.write(extra);
      }
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory failed", e);
    }
    return StoredResponse.of(FAILURE, Map.of("content-type", List.of(FAILURE_TYPE)), bytes.toByteArray());
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(utf8.length);
    out.write(utf8);
  }

  private static String readString(DataInputStream in, int max) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > max) {
      throw new IOException("a string of " + length + " bytes, more than " + max);
    }
    return new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  private <T> Result<T> result(Codec<T> codec, Execution execution) {
    if (execution.outcome() == Execution.Outcome.NOT_STORED) {
      // the operation's keep policy refuses the status a call keeps its value under: the executor rolled the work
      // back, so the caller must not take it for done
      throw new IdemException("the policy of operation '" + key.operation() + "' does not keep status "
          + execution.response().status() + ", under which an idempotent call keeps "
          + (execution.response().status() == NO_VALUE ? "no value" : "its value") + ": the work of " + key
          + " was rolled back; keep 200 and 204 for this operation");
    }
    StoredResponse response = execution.responseOrThrow();
    int status = response.status();
    if (status == NO_VALUE) {
      return new Result<>(null, execution);
    }
    if (status == FAILURE && FAILURE_TYPE.equals(response.header("content-type"))) {
      throw replayedFailure(response.body());
    }
    if (status != VALUE) {
      throw new IdemException("the record of " + key + " holds an answer with status " + status + ", which no"
          + " idempotent call keeps; is operation '" + key.operation() + "' also an HTTP route's?");
    }
    try {
      return new Result<>(codec.decode(response.body()), execution);
    } catch (RuntimeException e) {
      throw new IdemException("the kept value of " + key + " (" + response.header("content-type") + ", "
          + response.bodyLength() + " bytes) cannot be decoded by " + codec + ": " + e.getMessage(), e);
    }
  }

  private ReplayedFailureException replayedFailure(byte[] body) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(body))) {
      int format = in.readByte();
      if (format != FAILURE_FORMAT) {
        throw new IOException("unknown format " + format);
      }
      String type = readString(in, 4 * MAX_MESSAGE);
      boolean hasMessage = in.readBoolean();
      String message = readString(in, 4 * MAX_MESSAGE);
      byte[] extra = in.readNBytes(Math.max(0, Math.min(in.readInt(), body.length)));
      return new ReplayedFailureException(key, type, hasMessage ? message : null, extra);
    } catch (IOException e) {
      throw new IdemException("the kept failure of " + key + " is unreadable: " + e.getMessage(), e);
    }
  }
}
