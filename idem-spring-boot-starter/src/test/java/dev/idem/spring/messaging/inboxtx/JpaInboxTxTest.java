package dev.idem.spring.messaging.inboxtx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.spring.method.jpa.JpaShopApp;
import dev.idem.spring.method.jpa.JpaShopApp.ShopOrder;
import jakarta.persistence.EntityManager;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * An application whose only transaction manager is a {@link JpaTransactionManager} (as with Spring Boot's JPA
 * auto-configuration; {@link JpaShopApp}), on H2: the starter's inbox runs its transactions through it, since it
 * exposes the inbox's data source, so an entity the handler persists, a {@code JdbcTemplate} write and the inbox row
 * commit together, or none of them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JpaInboxTxTest {
  private ConfigurableApplicationContext context;
  private JdbcTemplate jdbc;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(JpaShopApp.class).web(WebApplicationType.NONE).run(
        "--spring.datasource.url=jdbc:h2:mem:inboxtx-jpa-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.store.initialize-schema=true", "--idem.outbox.initialize-schema=true");
    jdbc = context.getBean(JdbcTemplate.class);
    jdbc.execute("CREATE TABLE inboxtx_jpa_fx (event_id VARCHAR(64) NOT NULL)");
  }

  @AfterAll
  void stop() {
    if (context != null) {
      context.close();
    }
  }

  /** Persists an order, writes a row with JdbcTemplate, and throws after both on a {@code poison} payload. */
  private InboxHandler ship(List<Boolean> inSpringTransaction) {
    EntityManager entities = context.getBean(EntityManager.class);
    return (tx, event) -> {
      inSpringTransaction.add(TransactionSynchronizationManager.isActualTransactionActive());
      entities.persist(new ShopOrder(event.eventId(), "parcel"));
      entities.flush();
      jdbc.update("INSERT INTO inboxtx_jpa_fx (event_id) VALUES (?)", event.eventId());
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new IllegalStateException("poison " + event.eventId());
      }
      return "shipped";
    };
  }

  private int rows(String table, String column, String id) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE " + column + " = ?", Integer.class, id);
  }

  private static InboxEvent event(String id, String payload) {
    return InboxEvent.of(id, payload.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theEntityTheJdbcTemplateRowAndTheInboxRowCommitTogether() {
    Inbox inbox = context.getBean(Inbox.class);
    List<Boolean> inSpring = new ArrayList<>();
    String id = "jpa-" + UUID.randomUUID();

    inbox.processBatchAndCommit("inboxtx-jpa", List.of(event(id, "order")), ship(inSpring));

    assertThat(inSpring).containsExactly(true);
    assertThat(inbox.contains("inboxtx-jpa", id)).isTrue();
    assertThat(rows("idem_jpa_order", "id", id)).isEqualTo(1);
    assertThat(rows("inboxtx_jpa_fx", "event_id", id)).isEqualTo(1);
  }

  @Test
  void aHandlerThatThrowsLeavesNoEntityNoRowAndNoInboxRow() {
    Inbox inbox = context.getBean(Inbox.class);
    String id = "jpa-poison-" + UUID.randomUUID();

    assertThatThrownBy(() -> inbox.processBatchAndCommit("inboxtx-jpa", List.of(event(id, "poison")),
        ship(new ArrayList<>()))).isInstanceOf(InboxHandlerException.class);

    assertThat(inbox.contains("inboxtx-jpa", id)).isFalse();
    assertThat(rows("idem_jpa_order", "id", id)).isZero();
    assertThat(rows("inboxtx_jpa_fx", "event_id", id)).isZero();
  }
}
