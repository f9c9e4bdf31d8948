package dev.idem.spring.listener;

import static dev.idem.spring.listener.ListenerGaveUpException.find;

import dev.idem.outbox.consumer.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.springframework.kafka.core.KafkaOperations;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultAfterRollbackProcessor;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.FailedRecordProcessor;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The Kafka error handling of {@link IdempotentListener} methods, in two forms that classify a failure alike: a
 * {@link DefaultErrorHandler} for containers without a transaction manager, and a
 * {@link DefaultAfterRollbackProcessor} for containers with one (Spring for Apache Kafka hands a failed record to the
 * latter when the container's transaction rolled back). Both publish a record given up on
 * ({@link ListenerGaveUpException}, never retried) to {@code <topic><suffix>} at once, with the record's headers and
 * Idem's {@code idem-dlt-*} headers (as {@code KafkaInboxConsumer} writes them); seek back to a record handed back
 * ({@link ListenerRetryLaterException}) as often as it comes; seek back, once a second and without end, to a record
 * whose container could not open its transaction ({@link CannotCreateTransactionException}: the database is away, the
 * listener never ran); and try every other failure nine more times (a record that cannot be converted or deserialized
 * not at all, as Spring classifies it), then publish it to the dead-letter topic too, with Spring's
 * {@code kafka_dlt-exception-*} headers (one that failed deserialization as its raw bytes, through
 * {@link RawDeadLetters}). A record given up on whose publication fails is delivered again; any other is then logged
 * and skipped, as Spring's default handler does, so that a record Idem never saw cannot stop its
 * partition for good.
 */
final class KafkaDeadLetters {
  private static final System.Logger LOG = System.getLogger(KafkaDeadLetters.class.getName());
  /** The wait between tries of a record whose transaction could not be opened. */
  static final long NO_TRANSACTION_WAIT_MS = 1000;

  private KafkaDeadLetters() {}

  static DefaultErrorHandler errorHandler(KafkaOperations<?, ?> template, RawDeadLetters raw, String suffix) {
    DefaultErrorHandler handler = new DefaultErrorHandler(recoverer(template, raw, suffix), new FixedBackOff(0, 9));
    classify(handler);
    return handler;
  }

  /**
   * For a container with a transaction manager. With a transactional template (a Kafka transaction manager on the
   * container), a record dead-lettered has its offset committed in the transaction that publishes it (one that
   * failed deserialization is published outside it, see {@link RawDeadLetters}).
   */
  static DefaultAfterRollbackProcessor<Object, Object> afterRollbackProcessor(KafkaOperations<?, ?> template,
      RawDeadLetters raw, String suffix) {
    DefaultAfterRollbackProcessor<Object, Object> processor = new DefaultAfterRollbackProcessor<>(
        recoverer(template, raw, suffix), new FixedBackOff(0, 9), template, template.isTransactional());
    classify(processor);
    return processor;
  }

  private static ConsumerRecordRecoverer recoverer(KafkaOperations<?, ?> template, RawDeadLetters raw,
      String suffix) {
    DeadLetterPublishingRecoverer publisher = publisher(template, suffix);
    AtomicReference<DeadLetterPublishingRecoverer> rawPublisher = new AtomicReference<>();
    return (record, e) -> {
      if (find(e, ListenerGaveUpException.class) != null) {
        publisher.accept(record, e); // a failure to publish delivers the record again
        return;
      }
      // failed before or around the listener (its deserialization or conversion, a listener without Idem): kept if
      // it can be
      String where = record.topic() + "-" + record.partition() + "@" + record.offset();
      LOG.log(System.Logger.Level.ERROR, "giving up on " + where + "; publishing it to " + record.topic() + suffix
          + ": " + e);
      try {
        if (RawDeadLetters.failedDeserialization(record)) {
          rawPublisher.updateAndGet(p -> p != null ? p : publisher(raw.template(), suffix)).accept(record, e);
        } else {
          publisher.accept(record, e);
        }
      } catch (RuntimeException failed) {
        // a record Idem never saw must not stop its partition for good (a dead-letter topic that is missing, a
        // value the template cannot write): skipped, as Spring's default handler does
        LOG.log(System.Logger.Level.ERROR, "could not publish " + where + " to " + record.topic() + suffix
            + "; skipping it: " + failed);
      }
    };
  }

  private static DeadLetterPublishingRecoverer publisher(KafkaOperations<?, ?> template, String suffix) {
    DeadLetterPublishingRecoverer publisher = new DeadLetterPublishingRecoverer(template,
        (record, e) -> new TopicPartition(record.topic() + suffix, -1));
    publisher.addHeadersFunction(KafkaDeadLetters::headers);
    // a failed publication throws: the handler then seeks back and tries the record again
    publisher.setFailIfSendResultIsError(true);
    return publisher;
  }

  private static void classify(FailedRecordProcessor processor) {
    processor.addNotRetryableExceptions(ListenerGaveUpException.class);
    processor.setBackOffFunction((record, e) -> {
      if (find(e, ListenerRetryLaterException.class) != null) {
        return new FixedBackOff(0, FixedBackOff.UNLIMITED_ATTEMPTS);
      }
      if (find(e, CannotCreateTransactionException.class) != null) {
        return new FixedBackOff(NO_TRANSACTION_WAIT_MS, FixedBackOff.UNLIMITED_ATTEMPTS);
      }
      return (BackOff) null;
    });
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
