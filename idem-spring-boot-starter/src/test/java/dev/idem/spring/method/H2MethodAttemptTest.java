package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;

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

/** An attempt expression that names its parameter by position keeps the attempt number out of the fingerprint. */
class H2MethodAttemptTest {

  public static class Charges {
    final AtomicInteger runs = new AtomicInteger();

    @Idempotent(key = "#p0", attempt = "#p1")
    public int byP(String id, int attempt) {
      return runs.incrementAndGet();
    }

    @Idempotent(key = "#a0", attempt = "#a1")
    public int byA(String id, int attempt) {
      return runs.incrementAndGet();
    }

    public int runs() {
      return runs.get();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Charges charges() {
      return new Charges();
    }
  }

  @Test
  void aRetryNamedByPositionReplays() {
    List<String> args = new ArrayList<>(List.of("--idem.store.initialize-schema=true"));
    args.addAll(DataSourceArguments.h2InMemory("attempt"));
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE).run(args.toArray(String[]::new))) {
      Charges charges = context.getBean(Charges.class);

      assertThat(charges.byP("c-1", 1)).isEqualTo(1);
      assertThat(charges.byP("c-1", 2)).as("attempt 2 replays attempt 1").isEqualTo(1);
      assertThat(charges.byA("c-1", 1)).isEqualTo(2);
      assertThat(charges.byA("c-1", 2)).as("attempt 2 replays attempt 1").isEqualTo(2);
      assertThat(charges.byA("c-1", 3)).isEqualTo(2);
      assertThat(charges.runs()).isEqualTo(2);
    }
  }

  @Test
  void theParameterIsFoundByNameOrPosition() {
    String[] names = {"id", "attempt", "p0"};
    assertThat(IdempotentMethod.attemptParameter("#attempt", names)).isEqualTo(1);
    assertThat(IdempotentMethod.attemptParameter("#p1", names)).isEqualTo(1);
    assertThat(IdempotentMethod.attemptParameter("#a1", names)).isEqualTo(1);
    assertThat(IdempotentMethod.attemptParameter("#p0", names)).as("a parameter's own name first").isEqualTo(2);
    assertThat(IdempotentMethod.attemptParameter("#p3", names)).isEqualTo(-1);
    assertThat(IdempotentMethod.attemptParameter("#command.attempt", names)).isEqualTo(-1);
  }
}
