package dev.idem.examples.payments.provider;

import dev.idem.core.protocol.ProblemCode;
import java.util.Objects;

/**
 * The provider refused the call for good: an idempotency key reused with other parameters, an unknown charge, a
 * refund beyond what the charge has left. Calling again gives the same answer.
 */
public final class ProviderRejectedException extends ProviderException {
  private static final long serialVersionUID = 1L;

  private final transient ProblemCode code;

  /** A refusal with one of the {@code PROVIDER.*} codes of {@code PaymentsProblems}. */
  public ProviderRejectedException(ProblemCode code, String message) {
    super(message);
    this.code = Objects.requireNonNull(code, "code");
  }

  /** The problem code, such as {@code PROVIDER.idempotency_key_reused}. */
  public String code() {
    return code.code();
  }

  /** The problem code with its status and title. */
  public ProblemCode problemCode() {
    return code;
  }
}
