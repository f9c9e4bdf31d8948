package dev.idem.examples.payments.outbox;

import dev.idem.core.UuidV7;
import dev.idem.examples.payments.PaymentsProperties;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.webhook.EventEnvelope;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.kafka.KafkaTransport;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a tenant's events to the outbox for Kafka, on the caller's connection, in the transaction of the business
 * write that decides them: the event exists if and only if that write commits. One outbox row per event, whatever
 * webhook endpoints the tenant has, when Kafka is on ({@code payments.kafka.bootstrap-servers}) and the event's type
 * has a topic ({@code payments.kafka.topics[<type>]}, else {@code payments.kafka.default-topic}); otherwise nothing.
 *
 * <p>The row's destination is the relay's {@value #ROUTE} route, whose {@link KafkaTransport} picks the topic of the
 * type when it sends, so a change of topics applies to events still waiting. Its aggregate is the payment or the
 * refund, whose id becomes the record key: all events of one payment land in one partition, in order. The value is
 * the {@link EventEnvelope}, whose {@code id} is the outbox event id that the transport also sends in the
 * {@value KafkaTransport#EVENT_ID_HEADER} header (the same on every attempt: a consumer deduplicates on it, for
 * instance with {@link dev.idem.kafka.KafkaInboxConsumer}). The header {@value #TENANT_HEADER} names the tenant,
 * percent-encoded (UTF-8) where the name holds {@code %} or characters other than visible ASCII and space.
 *
 * <p>While Kafka is off, events written earlier for it wait in the outbox (a relay claims only the routes it has)
 * until a start with Kafka on sends them. Thread-safe.
 */
public final class KafkaEvents {
  /** The route of Kafka on the relay, and the destination of the events this writes. */
  public static final String ROUTE = "kafka";
  /** The record header that names the tenant. */
  public static final String TENANT_HEADER = "tenant";

  private static final Logger LOG = LoggerFactory.getLogger(KafkaEvents.class);

  private final Outbox outbox;
  private final Json json;
  private final PaymentsProperties.Kafka settings;

  public KafkaEvents(Outbox outbox, Json json, PaymentsProperties.Kafka settings) {
    this.outbox = outbox;
    this.json = json;
    this.settings = settings;
  }

  /** Whether events of {@code type} are written for Kafka. */
  public boolean publishes(String type) {
    return settings.topicOf(type).isPresent();
  }

  /**
   * Writes the event on {@code c} if its type is published to Kafka. Does not commit.
   *
   * @param aggregateType {@code payment} or {@code refund}
   * @param aggregateId the payment or refund id: the record key
   * @param data the resource the event is about, as its API shows it
   * @return the id of the event written, or empty when the type is not published to Kafka
   */
  public Optional<UUID> publish(Connection c, String tenant, String type, String aggregateType, String aggregateId,
      Map<String, Object> data, Instant created) {
    if (!publishes(type)) {
      return Optional.empty();
    }
    UUID id = UuidV7.next();
    OutboxEvent.Builder event = OutboxEvent.builder(type).id(id).aggregate(aggregateType, aggregateId)
        .payload(EventEnvelope.write(json, id, type, created, data)).destination(ROUTE);
    try {
      event.header(TENANT_HEADER, headerValue(tenant));
    } catch (IllegalArgumentException tooLong) {
      // only a name of hundreds of non-ASCII characters: never fail the payment for a header
      LOG.warn("event {} ({}) goes to Kafka without its {} header: {}", id, type, TENANT_HEADER,
          tooLong.getMessage());
    }
    return Optional.of(outbox.enqueue(JdbcTransaction.of(c), event.build()));
  }

  /** The tenant as a header value: itself, or percent-encoded UTF-8 where it holds {@code %} or non-visible ASCII. */
  static String headerValue(String tenant) {
    if (tenant.chars().allMatch(ch -> ch >= 0x20 && ch <= 0x7e && ch != '%')) {
      return tenant;
    }
    StringBuilder out = new StringBuilder();
    for (byte b : tenant.getBytes(StandardCharsets.UTF_8)) {
      int u = b & 0xff;
      if (u >= 0x20 && u <= 0x7e && u != '%') {
        out.append((char) u);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(u >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(u & 0xf, 16)));
      }
    }
    return out.toString();
  }
}
