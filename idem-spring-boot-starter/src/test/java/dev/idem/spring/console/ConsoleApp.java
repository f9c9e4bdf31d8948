package dev.idem.spring.console;

import dev.idem.console.ConsoleAction;
import dev.idem.console.ConsoleAudit;
import dev.idem.console.ConsoleAuthorizer;
import dev.idem.outbox.DeliveryResult;
import dev.idem.spring.outbox.OutboxRoute;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * A small application with the console: an authorizer that lets in the bearer of {@link #TOKEN} as {@code ops}, an
 * audit that keeps every action in memory, and an outbox route {@code hook} whose endpoint refuses (one attempt,
 * then dead) until {@link #endpointUp} is set.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ConsoleApp {
  /** The console's token in this application. */
  static final String TOKEN = "starter-console-token-0123456789";

  /** Whether the {@code hook} endpoint accepts events. */
  final AtomicBoolean endpointUp = new AtomicBoolean(false);
  /** Every console action, in order. */
  final List<ConsoleAction> actions = new CopyOnWriteArrayList<>();

  @Bean
  ConsoleAuthorizer consoleAuthorizer() {
    return ConsoleAuthorizer.bearerToken(TOKEN, "ops");
  }

  @Bean
  ConsoleAudit consoleAudit() {
    return actions::add;
  }

  @Bean
  OutboxRoute hookRoute() {
    return new OutboxRoute("hook", m -> endpointUp.get() ? DeliveryResult.delivered()
        : DeliveryResult.retry("the endpoint answered 503", 503), 1);
  }
}
