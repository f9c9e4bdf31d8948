package dev.idem.examples.orders;

/** A payment names an order this service does not have. */
public class UnknownOrderException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public UnknownOrderException(String orderId) {
    super("no order " + orderId);
  }
}
