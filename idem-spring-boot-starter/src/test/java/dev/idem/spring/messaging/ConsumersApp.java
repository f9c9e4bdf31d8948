package dev.idem.spring.messaging;

import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.InboxHandler;
import dev.idem.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * An application for the consumer tests, configured by properties only: its one {@link InboxHandler} bean,
 * {@code recordEffect}, writes a row per message into the business table {@code test.effects} in the inbox
 * transaction, and throws on a message whose payload is {@code poison}. A bean that is no handler,
 * {@code notAHandler}, is there for the validation tests.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ConsumersApp {
  /** What the handler throws on a poison message. */
  static final class PoisonException extends RuntimeException {
    PoisonException(String eventId) {
      super("poison message " + eventId);
    }
  }

  @Bean
  InboxHandler recordEffect(@Value("${test.effects:none}") String effects) {
    return (tx, event) -> {
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new PoisonException(event.eventId());
      }
      TestPostgres.insertEffect(JdbcTransaction.connectionOf(tx), effects, event.eventId());
      return null;
    };
  }

  @Bean
  String notAHandler() {
    return "not a handler";
  }
}
