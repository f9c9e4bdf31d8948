package dev.idem.examples.orders;

import dev.idem.core.PayloadMismatchException;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /orders} and {@code GET /orders/{id}}. The route itself is plain: the idempotency lives in
 * {@link OrderService#place}, so any other caller of the service (a job, a message handler) gets it too.
 */
@RestController
public class OrderController {
  private final OrderService orders;

  public OrderController(OrderService orders) {
    this.orders = orders;
  }

  /** Places the order, or answers the one placed earlier with the same request id. */
  @PostMapping("/orders")
  public ResponseEntity<Order> place(@RequestBody PlaceOrder command) {
    return ResponseEntity.status(HttpStatus.CREATED).body(orders.place(command));
  }

  @GetMapping("/orders/{id}")
  public ResponseEntity<Order> find(@PathVariable String id) {
    return ResponseEntity.of(orders.find(id));
  }

  /** The request id was used before for another order. */
  @ExceptionHandler(PayloadMismatchException.class)
  ResponseEntity<Map<String, String>> mismatch(PayloadMismatchException e) {
    return ResponseEntity.unprocessableContent().body(Map.of("error", "request id used for another order"));
  }

  @ExceptionHandler(IllegalArgumentException.class)
  ResponseEntity<Map<String, String>> badRequest(IllegalArgumentException e) {
    return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
  }
}
