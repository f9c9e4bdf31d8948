package dev.idem.examples.payments.webhook;

import java.util.List;

/** The events the service sends to its tenants' webhook endpoints. */
public final class EventTypes {
  /** A payment was captured: its {@code data} is the payment. */
  public static final String PAYMENT_SUCCEEDED = "payment.succeeded";
  /** The provider declined a payment's charge: its {@code data} is the (declined) payment. */
  public static final String PAYMENT_DECLINED = "payment.declined";
  /** A refund succeeded: its {@code data} is the refund. */
  public static final String REFUND_SUCCEEDED = "refund.succeeded";
  /** Subscribes an endpoint to every event type, present and future. */
  public static final String ALL = "*";

  /** Every event type, in the order the documentation lists them. */
  public static final List<String> KNOWN = List.of(PAYMENT_SUCCEEDED, PAYMENT_DECLINED, REFUND_SUCCEEDED);

  private EventTypes() {}
}
