package dev.idem.spring.messaging.inboxtx;

import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.spring.events.Externalized;
import dev.idem.spring.events.app.EventsApp.Recorder;
import dev.idem.spring.outbox.OutboxRoute;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;

/**
 * An application whose inbox handler, {@code shipWithEvent}, does what a Spring handler does with no transaction code
 * of its own: writes its row through {@link JdbcTemplate}, publishes an {@link Externalized} event through
 * {@link ApplicationEventPublisher}, and throws after both on a message whose payload is {@code poison}. An
 * {@code AFTER_COMMIT} listener of that event ({@link AfterCommitLog}) and a {@link ConsumerListener}
 * ({@link Heard}) record what happened; the relay sends the events to a {@link Recorder}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class InboxTxApp {
  /** The handler's domain event, relayed to {@code recording:shipments}. */
  @Externalized(value = "recording:shipments", type = "shipment.booked")
  public record ShipmentBooked(String orderId) {}

  @Bean
  Recorder recorder() {
    return new Recorder();
  }

  @Bean
  OutboxRoute recordingRoute(Recorder recorder) {
    return OutboxRoute.of("recording", recorder);
  }

  @Bean
  InboxHandler shipWithEvent(JdbcTemplate jdbc, ApplicationEventPublisher events,
      @Value("${test.effects}") String effects) {
    return (tx, event) -> {
      jdbc.update("INSERT INTO " + effects + " (event_id) VALUES (?)", event.eventId());
      events.publishEvent(new ShipmentBooked(event.eventId()));
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new IllegalStateException("poison message " + event.eventId() + ", after its row and its event");
      }
      return "shipped";
    };
  }

  /**
   * Runs after the commit of each transaction that published a {@link ShipmentBooked}: counts its runs per order and
   * notes what another connection reads of the order then (its inbox row and its effect row); then throws for an
   * order whose id starts with {@code boom-}.
   */
  public static final class AfterCommitLog {
    final Map<String, Integer> runs = new ConcurrentHashMap<>();
    final Map<String, String> seen = new ConcurrentHashMap<>();
    private final DataSource dataSource;
    private final String inboxTable;
    private final String effects;

    AfterCommitLog(DataSource dataSource, String inboxTable, String effects) {
      this.dataSource = dataSource;
      this.inboxTable = inboxTable;
      this.effects = effects;
    }

    @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
    public void shipped(ShipmentBooked event) {
      runs.merge(event.orderId(), 1, Integer::sum);
      String read;
      try (Connection other = dataSource.getConnection()) {
        read = "inbox=" + count(other, "SELECT COUNT(*) FROM " + inboxTable + " WHERE event_id = ?", event.orderId())
            + " effect=" + count(other, "SELECT COUNT(*) FROM " + effects + " WHERE event_id = ?", event.orderId());
      } catch (SQLException | RuntimeException e) {
        read = "failed: " + e;
      }
      seen.put(event.orderId(), read);
      if (event.orderId().startsWith("boom-")) {
        throw new IllegalStateException("the after-commit listener failed for " + event.orderId());
      }
    }

    private static int count(Connection c, String sql, String id) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setString(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getInt(1);
        }
      }
    }
  }

  @Bean
  AfterCommitLog afterCommitLog(DataSource dataSource, @Value("${idem.outbox.inbox-table}") String inboxTable,
      @Value("${test.effects}") String effects) {
    return new AfterCommitLog(dataSource, inboxTable, effects);
  }

  /** What the consumers told their listeners: message ids processed, duplicate, retried and dead-lettered. */
  public static final class Heard implements ConsumerListener {
    final List<String> processed = new CopyOnWriteArrayList<>();
    final List<String> duplicates = new CopyOnWriteArrayList<>();
    final List<String> retried = new CopyOnWriteArrayList<>();
    final List<String> deadLettered = new CopyOnWriteArrayList<>();

    @Override
    public void processed(String consumer, String source, String messageId) {
      processed.add(messageId);
    }

    @Override
    public void duplicate(String consumer, String source, String messageId) {
      duplicates.add(messageId);
    }

    @Override
    public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
      retried.add(messageId);
    }

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      deadLettered.add(messageId);
    }
  }

  @Bean
  Heard heard() {
    return new Heard();
  }
}
