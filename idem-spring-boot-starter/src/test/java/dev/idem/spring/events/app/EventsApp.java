package dev.idem.spring.events.app;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import dev.idem.spring.events.Externalized;
import dev.idem.spring.outbox.OutboxRoute;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * An application publishing domain events through Spring's {@link ApplicationEventPublisher}: payments written with
 * {@link JdbcTemplate} inside {@code @Transactional}, their events relayed to the {@code recording} route.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class EventsApp {

  /** Published when a payment is written; its JSON is Jackson's. */
  @Externalized(value = "recording:payments", type = "payment.succeeded")
  public record PaymentSucceeded(String paymentId, long amount) {}

  /** Ordered per account: the type is one of idem.outbox.ordered-types. */
  @Externalized(value = "recording:accounts", type = "account.changed", key = "account", aggregate = "account")
  public record AccountChanged(String account, int version) {}

  /** Not annotated: routed by idem.events.routes. */
  public record Refunded(String paymentId) {}

  /** Neither annotated nor configured: an ordinary application event, never written to the outbox. */
  public record Internal(String note) {}

  @Bean
  Recorder recorder() {
    return new Recorder();
  }

  @Bean
  OutboxRoute recordingRoute(Recorder recorder) {
    return OutboxRoute.of("recording", recorder);
  }

  @Bean
  Checkout checkout(JdbcTemplate jdbc, ApplicationEventPublisher publisher) {
    jdbc.execute("CREATE TABLE IF NOT EXISTS checkout_order (id VARCHAR(64) PRIMARY KEY, total BIGINT)");
    return new Checkout(jdbc, publisher);
  }

  @Bean
  Payments payments(JdbcTemplate jdbc, ApplicationEventPublisher publisher) {
    return new Payments(jdbc, publisher);
  }

  /** The application's service. */
  public static class Payments {
    private final JdbcTemplate jdbc;
    private final ApplicationEventPublisher publisher;
    private volatile String table = "ev_payment";

    Payments(JdbcTemplate jdbc, ApplicationEventPublisher publisher) {
      this.jdbc = jdbc;
      this.publisher = publisher;
    }

    public void useTable(String table) {
      this.table = table;
      jdbc.execute("CREATE TABLE IF NOT EXISTS " + table + " (id VARCHAR(64) PRIMARY KEY)");
    }

    /** Writes the payment and publishes its event; throws after both when {@code fail}. */
    @Transactional
    public void pay(String id, long amount, boolean fail) {
      jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", id);
      publisher.publishEvent(new PaymentSucceeded(id, amount));
      publisher.publishEvent(new Internal("paid " + id));
      if (fail) {
        throw new IllegalStateException("the payment failed after its event was published");
      }
    }

    @Transactional
    public void changeAccount(String account, int fromVersion, int toVersion) {
      for (int v = fromVersion; v <= toVersion; v++) {
        publisher.publishEvent(new AccountChanged(account, v));
      }
    }

    @Transactional
    public void refund(String paymentId) {
      publisher.publishEvent(new Refunded(paymentId));
    }

    /** Publishes without a transaction. */
    public void payWithoutTransaction(String id) {
      publisher.publishEvent(new PaymentSucceeded(id, 1));
    }

    public boolean exists(String id) {
      return !jdbc.queryForList("SELECT id FROM " + table + " WHERE id = ?", String.class, id).isEmpty();
    }
  }

  /** Records what the relay sends; a test waits for a payload with {@link #expect} (register before the action). */
  public static final class Recorder implements OutboxTransport {
    public final List<OutboxMessage> sent = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, CountDownLatch> expected = new ConcurrentHashMap<>();

    @Override
    public DeliveryResult send(OutboxMessage message) {
      sent.add(message);
      expected.forEach((needle, latch) -> {
        if (message.payload().contains(needle)) {
          latch.countDown();
        }
      });
      return DeliveryResult.delivered();
    }

    /** A latch opened when a message whose payload contains {@code needle} is sent. */
    public CountDownLatch expect(String needle) {
      return expected.computeIfAbsent(needle, k -> new CountDownLatch(1));
    }

    public List<OutboxMessage> sentTo(String destination) {
      synchronized (sent) {
        return sent.stream().filter(m -> m.destination().equals(destination)).toList();
      }
    }
  }
}
