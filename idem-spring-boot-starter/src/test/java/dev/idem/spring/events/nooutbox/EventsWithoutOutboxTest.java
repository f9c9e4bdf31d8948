package dev.idem.spring.events.nooutbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.spring.WithoutPackage;
import dev.idem.spring.events.Externalized;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * An application with {@code @Externalized} events, or {@code idem.events.routes}, but without dev.idem:idem-outbox
 * on its classpath: the start stops, naming the events, instead of publishing them to Spring only, where they would
 * be written nowhere. The classpath is the test's, with idem-outbox's classes hidden. The database is H2: the check
 * runs before anything is written.
 */
class EventsWithoutOutboxTest {

  /** Found by the scan of this package. */
  @Externalized(value = "webhook:shipments", type = "order.shipped")
  public record Shipped(String orderId) {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  private static Throwable start(ClassLoader loader, String... properties) {
    List<String> args = new ArrayList<>(List.of(
        "--spring.datasource.url=jdbc:h2:mem:events-no-outbox-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.store.initialize-schema=true"));
    for (String p : properties) {
      args.add("--" + p);
    }
    return catchThrowable(() -> {
      try (ConfigurableApplicationContext ignored = new SpringApplicationBuilder(App.class)
          .web(WebApplicationType.NONE).resourceLoader(new DefaultResourceLoader(loader))
          .run(args.toArray(String[]::new))) {
        // started
      }
    });
  }

  private static String messages(Throwable t) {
    List<String> all = new ArrayList<>();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.add(String.valueOf(c.getMessage()));
    }
    return String.join(" | ", all);
  }

  @Test
  void externalizedEventsWithoutIdemOutboxStopTheStartNamingThem() {
    assertThat(messages(start(new WithoutPackage("dev.idem.outbox.")))).contains("events of [" + Shipped.class.getName()
        + "] (@Externalized, or in idem.events.routes) are to be written to the outbox, but dev.idem:idem-outbox is"
        + " not on the classpath", "set idem.events.enabled=false");
  }

  @Test
  void aConfiguredRouteWithoutIdemOutboxStopsTheStartToo() {
    assertThat(messages(start(new WithoutPackage("dev.idem.outbox."), "idem.events.scan=false",
        "idem.events.routes[com.example.Refunded]=webhook:refunds")))
        .contains("events of [com.example.Refunded]", "dev.idem:idem-outbox is not on the classpath");
  }

  @Test
  void theCheckIsOffWhenEventsAreOffAndAbsentWithIdemOutbox() {
    assertThat(start(new WithoutPackage("dev.idem.outbox."), "idem.events.enabled=false")).as("events off").isNull();
    assertThat(start(new WithoutPackage("dev.idem.outbox."), "idem.events.scan=false")).as("nothing to write").isNull();
    assertThat(start(EventsWithoutOutboxTest.class.getClassLoader(), "idem.outbox.initialize-schema=true"))
        .as("with idem-outbox, the same application starts").isNull();
  }
}
