package dev.idem.spring.events.app;

import dev.idem.spring.events.Externalized;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

// events.md:begin
public class Checkout {
  /** Written to the outbox as an event of type order.placed, sent by the relay's "recording" route. */
  @Externalized(value = "recording:orders", type = "order.placed")
  public record OrderPlaced(String orderId, long total) {}

  private final JdbcTemplate jdbc;
  private final ApplicationEventPublisher publisher;

  public Checkout(JdbcTemplate jdbc, ApplicationEventPublisher publisher) {
    this.jdbc = jdbc;
    this.publisher = publisher;
  }

  @Transactional
  public void place(String orderId, long total) {
    jdbc.update("INSERT INTO checkout_order (id, total) VALUES (?, ?)", orderId, total);
    publisher.publishEvent(new OrderPlaced(orderId, total)); // written with the insert, or not at all
  }
}
// events.md:end
