package dev.idem.examples.orders;

import dev.idem.spring.Idempotent;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/** Places orders and marks them paid; every write goes through Spring's transaction on the one data source. */
@Service
public class OrderService {
  private static final RowMapper<Order> ORDER = (rs, n) -> new Order(rs.getString("id"), rs.getString("request_id"),
      rs.getString("customer"), rs.getString("sku"), rs.getInt("quantity"), rs.getString("status"));

  private final JdbcTemplate jdbc;
  private final ApplicationEventPublisher events;

  public OrderService(JdbcTemplate jdbc, ApplicationEventPublisher events) {
    this.jdbc = jdbc;
    this.events = events;
  }

  /**
   * Places the order once per request id and customer: the first call inserts the row, in the transaction that
   * writes Idem's record of the call; every later call with that request id gets the same order back without
   * inserting anything. The same request id with another order (sku, quantity) is refused with
   * {@code PayloadMismatchException}.
   */
  @Idempotent(key = "#command.requestId", scope = "#command.customer")
  @Transactional
  public Order place(PlaceOrder command) {
    String id = UUID.randomUUID().toString();
    jdbc.update("INSERT INTO orders (id, request_id, customer, sku, quantity, status) VALUES (?, ?, ?, ?, ?, ?)",
        id, command.requestId(), command.customer(), command.sku(), command.quantity(), "PLACED");
    return new Order(id, command.requestId(), command.customer(), command.sku(), command.quantity(), "PLACED");
  }

  /**
   * Marks the order paid and publishes {@link OrderConfirmed}, both in the caller's transaction: the inbox's, a
   * Spring transaction the starter opens for each payment message. An order paid already is left as it is, and
   * nothing is published again.
   *
   * @return whether the order was paid by this call
   * @throws UnknownOrderException when there is no such order
   */
  @Transactional(propagation = Propagation.MANDATORY)
  public boolean markPaid(PaymentSucceeded payment) {
    int updated = jdbc.update("UPDATE orders SET status = 'PAID', payment_id = ? WHERE id = ? AND status = 'PLACED'",
        payment.paymentId(), payment.orderId());
    if (updated == 0) {
      find(payment.orderId()).orElseThrow(() -> new UnknownOrderException(payment.orderId()));
      return false; // paid already
    }
    Order order = find(payment.orderId()).orElseThrow();
    events.publishEvent(new OrderConfirmed(order.id(), payment.paymentId(), order.customer(), order.sku(),
        order.quantity()));
    return true;
  }

  /** The order, if there is one with that id. */
  public Optional<Order> find(String id) {
    List<Order> found = jdbc.query("SELECT id, request_id, customer, sku, quantity, status FROM orders WHERE id = ?",
        ORDER, id);
    return found.stream().findFirst();
  }
}
