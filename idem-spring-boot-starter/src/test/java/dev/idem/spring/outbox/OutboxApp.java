package dev.idem.spring.outbox;

import dev.idem.outbox.DeliveryResult;
import dev.idem.webhook.WebhookMessage;
import dev.idem.webhook.WebhookReceiverServlet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * An application for the outbox starter's tests: a route whose transport records what it is given, a route whose
 * transport refuses everything (dead after one attempt), and the {@code provider} webhook receiver.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class OutboxApp {
  /** Effects of the provider webhook handler, per webhook id. */
  final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();

  @Bean
  RecordingTransport recordingTransport() {
    return new RecordingTransport();
  }

  @Bean
  OutboxRoute recordingRoute(RecordingTransport transport) {
    return OutboxRoute.of("recording", transport);
  }

  @Bean
  OutboxRoute refusingRoute() {
    return new OutboxRoute("refusing", m -> DeliveryResult.permanent("410 Gone", 410), 1);
  }

  /** A handler writing through Spring's JdbcTemplate: it must join the inbox's transaction. */
  @Bean
  ServletRegistrationBean<WebhookReceiverServlet> ledgerWebhooks(WebhookReceivers receivers, JdbcTemplate jdbc) {
    return receivers.register("ledger", (tx, event) -> {
      WebhookMessage message = event.message(WebhookMessage.class);
      jdbc.update("INSERT INTO starter_webhook_effect (webhook_id) VALUES (?)", message.id());
      // a result over the inbox's limit fails the webhook after the write: the write must roll back with it
      return message.bodyText().contains("fail") ? "x".repeat(5000) : "booked";
    });
  }

  @Bean
  ServletRegistrationBean<WebhookReceiverServlet> providerWebhooks(WebhookReceivers receivers) {
    return receivers.register("provider", (tx, event) -> {
      effects.computeIfAbsent(event.eventId(), k -> new AtomicInteger()).incrementAndGet();
      return "ok";
    });
  }
}
