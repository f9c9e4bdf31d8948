package dev.idem.examples.orders;

/**
 * The body of a {@code payment.succeeded} message from the payment service, as JSON: the order it pays for and the
 * payment's id. The message's AMQP {@code message-id} is what the inbox deduplicates on.
 *
 * @param orderId the order paid for
 * @param paymentId the payment service's id of the payment
 */
public record PaymentSucceeded(String orderId, String paymentId) {
  public PaymentSucceeded {
    if (orderId == null || orderId.isBlank() || orderId.length() > 64) {
      throw new IllegalArgumentException("orderId must be 1 to 64 characters");
    }
    if (paymentId == null || paymentId.isBlank() || paymentId.length() > 255) {
      throw new IllegalArgumentException("paymentId must be 1 to 255 characters");
    }
  }
}
