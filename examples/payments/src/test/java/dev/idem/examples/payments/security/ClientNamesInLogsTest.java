package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.ServiceOfItsOwn;
import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Security, on the service's own container (Tomcat): a JSON member name is the client's text, and a validation answer
 * about it never puts that text into its problem code, which the MDC ({@code error_code}) and the request's log
 * line carry: a name holding CR, LF or an escape sequence is answered {@code VALIDATION.field}, with the name escaped
 * in the {@code field} member, and no log line or MDC value holds a line break.
 */
class ClientNamesInLogsTest extends ServiceOfItsOwn {
  private static final String MDC_FILTER = "dev.idem.spring.logging.IdemMdcFilter";

  @Override
  protected List<String> arguments() {
    return List.of("--payments.outbox.enabled=false", "--logging.level." + MDC_FILTER + "=DEBUG");
  }

  @Test
  void aMemberNameWithALineBreakStaysOutOfTheCodeTheMdcAndTheLog() {
    List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    Logger logger = context.getLogger(MDC_FILTER);
    AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
      @Override
      protected void append(ILoggingEvent event) {
        event.getMDCPropertyMap(); // taken now, on the request's thread
        events.add(event);
      }
    };
    appender.setContext(context);
    appender.start();
    logger.addAppender(appender);
    String forged = "x\r\n2026-01-01 INFO forged\u001b[31m";
    String name = "x\\r\\n2026-01-01 INFO forged\\u001b[31m";
    Answer unknown;
    Answer unstorable;
    try {
      unknown = service.put("/admin/faults", "sk_admin", "{\"" + name + "\":0}");
      unstorable = service.post("/payments", "sk_test_alice", UUID.randomUUID().toString(),
          "{\"" + name + "\":\"\\u0000\"}");
      // the filter logs a request's line after its answer went out, so the client can read it first
      Eventually.await("both requests' lines at DEBUG", Duration.ofSeconds(10), events::size, n -> n >= 2);
    } finally {
      logger.detachAppender(appender);
      appender.stop();
    }

    for (Answer a : List.of(unknown, unstorable)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(400);
      assertThat(a.code()).as(a.toString()).isEqualTo("VALIDATION.field");
      assertThat(a.json().path("field").asString()).isEqualTo("x\\u000d\\u000a2026-01-01 INFO forged\\u001b[31m");
    }
    assertThat(events).as("the request's line, at DEBUG").hasSizeGreaterThanOrEqualTo(2);
    for (ILoggingEvent e : events) {
      Map<String, String> mdc = e.getMDCPropertyMap();
      assertThat(e.getFormattedMessage()).doesNotContain("\r", "\n", "\u001b").contains("VALIDATION.field");
      assertThat(mdc).containsEntry("error_code", "VALIDATION.field");
      assertThat(String.valueOf(mdc)).doesNotContain("\r", "\n", "\u001b", forged);
    }
  }
}
