package dev.idem.examples.payments.web;

import dev.idem.core.protocol.ProblemCode;

/**
 * The service's own problem codes, each defined here once; Idem's (the idempotency filter's, the store's, the
 * dependencies') are the {@link ProblemCode} constants. Codes built from a field or resource name at run time
 * ({@code VALIDATION.<field>}, {@code NOT_FOUND.<what>}) are made by {@link ApiProblem}.
 */
public final class PaymentsProblems {
  /** 404: no route for the request. */
  public static final ProblemCode ROUTE_NOT_FOUND = ProblemCode.of("NOT_FOUND.route", 404, false, "Not found");
  /** 404: no payment with this id for the tenant. */
  public static final ProblemCode PAYMENT_NOT_FOUND = ProblemCode.of("NOT_FOUND.payment", 404, false,
      "Payment not found");
  /** 406: the client accepts none of the media types the resource answers with. */
  public static final ProblemCode NOT_ACCEPTABLE = ProblemCode.of("VALIDATION.not_acceptable", 406, false,
      "Not acceptable");
  /** 400: a body that could not be read. */
  public static final ProblemCode UNREADABLE_BODY = ProblemCode.of("VALIDATION.body", 400, false, "Invalid request");
  /**
   * 400: a query string that is not percent-encoded UTF-8, or holds text the databases cannot store (a NUL); see
   * {@link RequestTextFilter}.
   */
  public static final ProblemCode INVALID_QUERY = ProblemCode.of("VALIDATION.query", 400, false,
      "Invalid query string");
  /** 400 (or another 4xx the framework chose): a request the framework refused. */
  public static final ProblemCode INVALID_REQUEST = ProblemCode.of("VALIDATION.request", 400, false,
      "Invalid request");
  /**
   * 408, retryable: a request body that did not arrive whole within the deadline, or stalled; see
   * {@link RequestBodyGuard}.
   */
  public static final ProblemCode BODY_TIMEOUT = ProblemCode.of("TRANSIENT.request_timeout", 408, true,
      "Request body too slow");
  /** 503, retryable after {@code Retry-After}: the service takes no more of this kind of request for now. */
  public static final ProblemCode OVERLOADED = ProblemCode.of("TRANSIENT.overloaded", 503, true,
      "Service overloaded");
  /** 500, retryable: an unexpected failure. */
  public static final ProblemCode INTERNAL_ERROR = ProblemCode.of("INTERNAL.error", 500, true, "Internal error");
  /** 402: the provider declined the charge. */
  public static final ProblemCode PAYMENT_DECLINED = ProblemCode.of("PAYMENT.declined", 402, false,
      "Payment declined");
  /** 409, retryable: a refund of a payment still being charged. */
  public static final ProblemCode PAYMENT_PENDING = ProblemCode.of("TRANSIENT.payment_pending", 409, true,
      "Payment still in progress");
  /** 422: a refund of a payment that is not captured. */
  public static final ProblemCode PAYMENT_NOT_REFUNDABLE = ProblemCode.of("VALIDATION.payment_not_refundable", 422,
      false, "Payment cannot be refunded");
  /** 422: a refund above what the payment has left. */
  public static final ProblemCode REFUND_EXCEEDS_PAYMENT = ProblemCode.of("VALIDATION.refund_exceeds_payment", 422,
      false, "Refund exceeds the payment");
  /** 422: the simulated provider saw its idempotency key with other parameters. */
  public static final ProblemCode PROVIDER_KEY_REUSED = ProblemCode.of("PROVIDER.idempotency_key_reused", 422,
      false, "Provider rejected the call");
  /** 422: the simulated provider refused the call for good (its injected refusal fault); nothing was applied. */
  public static final ProblemCode PROVIDER_REFUSED = ProblemCode.of("PROVIDER.refused", 422, false,
      "Provider rejected the call");
  /** 422: the simulated provider cannot refund the charge. */
  public static final ProblemCode PROVIDER_CHARGE_NOT_REFUNDABLE = ProblemCode.of("PROVIDER.charge_not_refundable",
      422, false, "Provider rejected the call");
  /** 422: the simulated provider refuses a refund above what the charge has left. */
  public static final ProblemCode PROVIDER_REFUND_EXCEEDS_CHARGE = ProblemCode.of("PROVIDER.refund_exceeds_charge",
      422, false, "Provider rejected the call");
  /** 409: an outbox event already pending. */
  public static final ProblemCode OUTBOX_PENDING = ProblemCode.of("CONFLICT.outbox.pending", 409, false,
      "Event already pending");
  /** 409, retryable: an outbox event being sent. */
  public static final ProblemCode OUTBOX_IN_FLIGHT = ProblemCode.of("CONFLICT.outbox.in_flight", 409, true,
      "Event in flight");
  /** 409: an outbox event already finished. */
  public static final ProblemCode OUTBOX_FINISHED = ProblemCode.of("CONFLICT.outbox.finished", 409, false,
      "Event already finished");
  /** 409: a console action on a record that changed since it was read. */
  public static final ProblemCode RECORD_CHANGED = ProblemCode.of("CONFLICT.record.changed", 409, false,
      "Record changed");

  /** 409: a resolution of a record that is not uncertain. */
  public static final ProblemCode RECORD_NOT_UNCERTAIN = ProblemCode.of("CONFLICT.record.not_uncertain", 409, false,
      "Record not uncertain");
  /**
   * 422: a payment whose outcome was uncertain, decided by reconciliation: the provider never charged it, and it is
   * failed. Send it again with a new key if it is still wanted.
   */
  public static final ProblemCode PAYMENT_NOT_CHARGED = ProblemCode.of("PAYMENT.not_charged", 422, false,
      "Payment not charged");
  /** 422: a refund whose outcome was uncertain, decided by reconciliation: the provider never made it. */
  public static final ProblemCode REFUND_NOT_MADE = ProblemCode.of("REFUND.not_made", 422, false, "Refund not made");

  private PaymentsProblems() {}
}
