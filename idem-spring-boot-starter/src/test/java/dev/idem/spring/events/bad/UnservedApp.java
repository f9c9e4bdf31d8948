package dev.idem.spring.events.bad;

import dev.idem.outbox.DeliveryResult;
import dev.idem.spring.events.Externalized;
import dev.idem.spring.outbox.OutboxRoute;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** An application with an {@code @Externalized} event whose route no {@link OutboxRoute} bean serves. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class UnservedApp {
  @Externalized("nowhere:payments")
  public record Lost(String id) {}

  @Bean
  OutboxRoute someRoute() {
    return OutboxRoute.of("somewhere", m -> DeliveryResult.delivered());
  }
}
