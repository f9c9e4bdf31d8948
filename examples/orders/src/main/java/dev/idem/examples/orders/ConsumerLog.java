package dev.idem.examples.orders;

import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Logs what the inbox consumers could not simply process: a handler failure to be tried again, a message given up
 * on, a message refused, a stopped consumer. The starter's meters count the same; this says which message and why.
 * Payloads are never logged; message ids, which come from outside, are logged as printable ASCII, cut short.
 */
@Component
public class ConsumerLog implements ConsumerListener {
  private static final Logger LOG = LoggerFactory.getLogger(ConsumerLog.class);

  @Override
  public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
    LOG.warn("consumer {}: message {} failed ({}), tried again: {}", consumer, printable(messageId), decision,
        String.valueOf(error));
  }

  @Override
  public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
    LOG.error("consumer {}: message {} given up on ({})", consumer, printable(messageId), decision, error);
  }

  @Override
  public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
    LOG.error("consumer {}: message {} refused ({}): {}", consumer, printable(messageId), reason, printable(detail));
  }

  @Override
  public void stopped(String consumer, Throwable error) {
    LOG.error("consumer {} stopped; restart the service", consumer, error);
  }

  /** At most 200 characters, anything but printable ASCII replaced, so that a log line cannot be forged. */
  static String printable(String text) {
    if (text == null) {
      return "(none)";
    }
    String cut = text.length() > 200 ? text.substring(0, 200) + "..." : text;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }
}
