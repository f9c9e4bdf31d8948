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
import org.springframework.jdbc.core.JdbcTemplate;

/** An {@code @Idempotent} method that beans of several classes inherit: each bean's calls are its own. */
class H2InheritedMethodsTest {

  public record Sent(String channel, String orderId, int number) {}

  public abstract static class Notifier {
    final AtomicInteger sent = new AtomicInteger();

    @Idempotent(key = "#orderId")
    public Sent notify(String orderId) {
      return new Sent(channel(), orderId, sent.incrementAndGet());
    }

    abstract String channel();

    /** How many times the method ran (through the proxy, on the bean itself). */
    public int sent() {
      return sent.get();
    }
  }

  public static class EmailNotifier extends Notifier {
    @Override
    String channel() {
      return "email";
    }
  }

  public static class SmsNotifier extends Notifier {
    @Override
    String channel() {
      return "sms";
    }
  }

  /** One subclass bean alone: its method keeps the operation named after the class that declares it. */
  public static class Counter {
    final AtomicInteger calls = new AtomicInteger();

    @Idempotent(key = "#id")
    public int count(String id) {
      return calls.incrementAndGet();
    }
  }

  public static class OnlyCounter extends Counter {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    EmailNotifier email() {
      return new EmailNotifier();
    }

    @Bean
    SmsNotifier sms() {
      return new SmsNotifier();
    }

    @Bean
    OnlyCounter counter() {
      return new OnlyCounter();
    }
  }

  private static ConfigurableApplicationContext start() {
    List<String> args = new ArrayList<>(List.of("--idem.store.initialize-schema=true"));
    args.addAll(DataSourceArguments.h2InMemory("inherited"));
    return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE).run(args.toArray(String[]::new));
  }

  @Test
  void twoSubclassesWithTheSameKeyEachRunTheirOwnMethodOnce() {
    try (ConfigurableApplicationContext context = start()) {
      EmailNotifier email = context.getBean(EmailNotifier.class);
      SmsNotifier sms = context.getBean(SmsNotifier.class);

      assertThat(email.notify("42")).isEqualTo(new Sent("email", "42", 1));
      assertThat(sms.notify("42")).isEqualTo(new Sent("sms", "42", 1));
      assertThat(email.notify("42")).isEqualTo(new Sent("email", "42", 1));
      assertThat(sms.notify("42")).isEqualTo(new Sent("sms", "42", 1));
      assertThat(email.sent()).isEqualTo(1);
      assertThat(sms.sent()).isEqualTo(1);
      OnlyCounter counter = context.getBean(OnlyCounter.class);
      assertThat(counter.count("42")).isEqualTo(1);
      assertThat(counter.count("42")).isEqualTo(1);

      List<String> operations = context.getBean(JdbcTemplate.class)
          .queryForList("SELECT operation FROM idem_record ORDER BY operation", String.class);
      assertThat(operations).containsExactlyInAnyOrder(EmailNotifier.class.getName() + "#notify",
          SmsNotifier.class.getName() + "#notify", Counter.class.getName() + "#count");
    }
  }
}
