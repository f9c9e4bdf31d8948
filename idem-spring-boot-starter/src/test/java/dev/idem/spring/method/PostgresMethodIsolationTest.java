package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.spring.Idempotent;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Transactional;

/** The transaction the interceptor starts for a method has the isolation of the method's own @Transactional. */
class PostgresMethodIsolationTest {

  public static class Reports {
    private final JdbcTemplate jdbc;

    public Reports(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Idempotent(key = "#id")
    @Transactional(isolation = Isolation.SERIALIZABLE)
    public String serializable(String id) {
      return jdbc.queryForObject("SHOW transaction_isolation", String.class);
    }

    @Idempotent(key = "#id")
    @Transactional
    public String plain(String id) {
      return jdbc.queryForObject("SHOW transaction_isolation", String.class);
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Reports reports(JdbcTemplate jdbc) {
      return new Reports(jdbc);
    }
  }

  @Test
  void aSerializableMethodRunsAtSerializable() {
    List<String> args = new ArrayList<>(List.of("--idem.store.initialize-schema=true",
        "--idem.name=isolation-" + UUID.randomUUID()));
    args.addAll(DataSourceArguments.postgres());
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE).run(args.toArray(String[]::new))) {
      Reports reports = context.getBean(Reports.class);
      String before = context.getBean(JdbcTemplate.class)
          .queryForObject("SHOW default_transaction_isolation", String.class);
      assertThat(before).isEqualTo("read committed");

      assertThat(reports.serializable("r-1")).isEqualTo("serializable");
      assertThat(reports.serializable("r-1")).as("the replay").isEqualTo("serializable");
      assertThat(reports.plain("r-1")).isEqualTo("read committed");
    }
  }
}
