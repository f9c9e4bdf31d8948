package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * A {@code LEASED} method called inside an ordinary {@code @Transactional} caller runs outside that transaction, as
 * leased work does: what it writes commits with it, so a caller that fails afterwards cannot roll back the writes of a
 * call whose record says it is done (its retry would replay a value whose writes are gone). On H2.
 */
class H2LeasedMethodInCallerTransactionTest {

  public static class Shipments {
    private final JdbcTemplate jdbc;
    private final AtomicInteger runs = new AtomicInteger();

    public Shipments(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Idempotent(key = "#id", mode = IdempotentRoute.Mode.LEASED)
    public int ship(String id) {
      jdbc.update("INSERT INTO shipment (id) VALUES (?)", id);
      return runs.incrementAndGet();
    }

    /** How often the method ran (a method: the bean is a proxy). */
    public int runs() {
      return runs.get();
    }
  }

  public static class Checkout {
    private final Shipments shipments;

    public Checkout(Shipments shipments) {
      this.shipments = shipments;
    }

    /** Ships, then fails: the caller's transaction rolls back. */
    @Transactional
    public void checkout(String id) {
      shipments.ship(id);
      throw new IllegalStateException("the caller fails after the shipment");
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Shipments shipments(JdbcTemplate jdbc) {
      return new Shipments(jdbc);
    }

    @Bean
    Checkout checkout(Shipments shipments) {
      return new Checkout(shipments);
    }
  }

  @Test
  void itsWritesCommitWithItNotWithACallerThatRollsBackAfterIt() {
    List<String> args = new ArrayList<>(List.of("--idem.store.initialize-schema=true"));
    args.addAll(DataSourceArguments.h2InMemory("leased-in-caller"));
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE).run(args.toArray(String[]::new))) {
      JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
      jdbc.execute("CREATE TABLE shipment (id VARCHAR(64) PRIMARY KEY)");
      Shipments shipments = context.getBean(Shipments.class);

      assertThatThrownBy(() -> context.getBean(Checkout.class).checkout("s-1"))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("the caller fails");

      assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM shipment WHERE id = 's-1'", Integer.class))
          .as("the shipment the record says was made").isEqualTo(1);
      assertThat(shipments.ship("s-1")).as("the retry replays").isEqualTo(1);
      assertThat(shipments.runs()).isEqualTo(1);
      assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM shipment", Integer.class)).isEqualTo(1);
    }
  }
}
