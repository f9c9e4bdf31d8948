package dev.idem.spring.listener;

import static dev.idem.spring.listener.ListenerGaveUpException.find;

import dev.idem.outbox.consumer.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.springframework.kafka.core.KafkaOperations;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The Kafka error handler for {@link IdempotentListener} methods: a {@link DefaultErrorHandler} that publishes a
 * record given up on ({@link ListenerGaveUpException}, never retried) to {@code <topic><suffix>} at once, with the
 * record's headers and Idem's {@code idem-dlt-*} headers (as {@code KafkaInboxConsumer} writes them); seeks back to a
 * record handed back ({@link ListenerRetryLaterException}) as often as it comes; and treats every other failure as
 * Spring's default does: nine retries, then the record is logged and skipped.
 */
final class KafkaDeadLetters {
  private static final System.Logger LOG = System.getLogger(KafkaDeadLetters.class.getName());

  private KafkaDeadLetters() {}

  static DefaultErrorHandler errorHandler(KafkaOperations<?, ?> template, String suffix) {
    DeadLetterPublishingRecoverer publisher = new DeadLetterPublishingRecoverer(template,
        (record, e) -> new TopicPartition(record.topic() + suffix, -1));
    publisher.addHeadersFunction(KafkaDeadLetters::headers);
    // a failed publication throws: the handler then seeks back and tries the record again
    publisher.setFailIfSendResultIsError(true);
    ConsumerRecordRecoverer recoverer = (record, e) -> {
      if (find(e, ListenerGaveUpException.class) != null) {
        publisher.accept(record, e);
      } else {
        LOG.log(System.Logger.Level.ERROR, "retries exhausted for " + record.topic() + "-" + record.partition()
            + "@" + record.offset() + "; skipping it: " + e);
      }
    };
    DefaultErrorHandler handler = new DefaultErrorHandler(recoverer, new FixedBackOff(0, 9));
    handler.addNotRetryableExceptions(ListenerGaveUpException.class);
    handler.setBackOffFunction((record, e) -> find(e, ListenerRetryLaterException.class) != null
        ? new FixedBackOff(0, FixedBackOff.UNLIMITED_ATTEMPTS) : (BackOff) null);
    return handler;
  }

  /** Idem's dead-letter headers of a record given up on; none for any other failure. */
  static Headers headers(ConsumerRecord<?, ?> record, Exception e) {
    RecordHeaders headers = new RecordHeaders();
    ListenerGaveUpException gaveUp = find(e, ListenerGaveUpException.class);
    if (gaveUp == null) {
      return headers;
    }
    Map<String, String> origin = new LinkedHashMap<>();
    origin.put("topic", record.topic());
    origin.put("partition", Integer.toString(record.partition()));
    origin.put("offset", Long.toString(record.offset()));
    DeadLetterHeaders.of(gaveUp.decision(), gaveUp.consumer(), origin, gaveUp.history())
        .forEach((name, value) -> headers.add(name, utf8(value)));
    return headers;
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
