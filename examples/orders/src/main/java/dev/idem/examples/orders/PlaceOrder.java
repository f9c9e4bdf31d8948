package dev.idem.examples.orders;

/**
 * The command that places an order. The caller picks {@code requestId} once per order it means to place and sends
 * it again on every retry: the service places one order per request id.
 *
 * @param requestId the caller's id for this order, 1 to 255 visible ASCII characters
 * @param customer who orders, 1 to 100 characters
 * @param sku what is ordered, 1 to 64 characters
 * @param quantity how many, 1 to 1000
 */
public record PlaceOrder(String requestId, String customer, String sku, int quantity) {
  public PlaceOrder {
    if (requestId == null || !requestId.matches("[\\x21-\\x7e]{1,255}")) {
      throw new IllegalArgumentException("requestId must be 1 to 255 visible ASCII characters");
    }
    if (customer == null || customer.isBlank() || customer.length() > 100) {
      throw new IllegalArgumentException("customer must be 1 to 100 characters");
    }
    if (sku == null || sku.isBlank() || sku.length() > 64) {
      throw new IllegalArgumentException("sku must be 1 to 64 characters");
    }
    if (quantity < 1 || quantity > 1000) {
      throw new IllegalArgumentException("quantity must be 1 to 1000, got " + quantity);
    }
  }
}
