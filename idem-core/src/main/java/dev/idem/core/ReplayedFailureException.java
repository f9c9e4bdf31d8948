package dev.idem.core;

import java.util.Objects;

/**
 * A duplicate of a call whose first execution failed with an exception the caller declared deterministic
 * ({@link IdempotentCall#keepFailures}): the failure was kept, and the duplicate gets it back instead of running
 * again. Carries what was kept: the exception's class name, its message and an optional payload. Never retry with
 * the same key: the answer stays the same until the record expires.
 */
public class ReplayedFailureException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final String exceptionType;
  private final String exceptionMessage;
  private final byte[] payload;

  public ReplayedFailureException(RecordKey key, String exceptionType, String exceptionMessage, byte[] payload) {
    super("key '" + key.key() + "' of " + key.operation() + " first failed with " + exceptionType
        + (exceptionMessage == null ? "" : ": " + exceptionMessage) + "; the failure is kept and not run again");
    this.key = key;
    this.exceptionType = Objects.requireNonNull(exceptionType, "exceptionType");
    this.exceptionMessage = exceptionMessage;
    this.payload = payload == null ? new byte[0] : payload.clone();
  }

  public RecordKey key() {
    return key;
  }

  /** The class name of the exception the first execution threw, such as {@code com.acme.OutOfStockException}. */
  public String exceptionType() {
    return exceptionType;
  }

  /** Its message (at most 1000 characters kept), or {@code null} when it had none. */
  public String exceptionMessage() {
    return exceptionMessage;
  }

  /** The payload the caller kept with the failure; empty when none. */
  public byte[] payload() {
    return payload.clone();
  }

  /** The payload, decoded; {@code null} when none was kept. */
  public <P> P payload(Codec<P> codec) {
    return payload.length == 0 ? null : codec.decode(payload.clone());
  }

  /** Whether the first execution's exception was of {@code type} (by class name; its supertypes are not known). */
  public boolean isOf(Class<? extends Throwable> type) {
    return type.getName().equals(exceptionType);
  }
}
