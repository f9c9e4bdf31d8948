package dev.idem.outbox;

import dev.idem.core.UuidV7;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * One event to write to the outbox in the caller's transaction: what happened ({@link #type()}), to which aggregate
 * (the ordering key), the JSON payload, transport headers and the destination that a relay route sends it to.
 *
 * <pre>{@code
 * OutboxEvent event = OutboxEvent.builder("payment.succeeded")
 *     .aggregate("payment", paymentId)
 *     .payload("{\"id\":\"" + paymentId + "\"}")
 *     .destination("webhook:" + endpointId)
 *     .build();
 * }</pre>
 */
public final class OutboxEvent {
  private final UUID id;
  private final String type;
  private final String aggregateType;
  private final String aggregateId;
  private final String payload;
  private final Map<String, String> headers;
  private final String destination;
  private final Instant availableAt;

  private OutboxEvent(Builder b) {
    this.id = b.id == null ? UuidV7.next() : b.id;
    this.type = b.type;
    this.aggregateType = b.aggregateType;
    this.aggregateId = b.aggregateId;
    this.payload = b.payload;
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    this.destination = b.destination;
    this.availableAt = b.availableAt;
  }

  private OutboxEvent(OutboxEvent e, String payload) {
    this.id = e.id;
    this.type = e.type;
    this.aggregateType = e.aggregateType;
    this.aggregateId = e.aggregateId;
    this.payload = payload;
    this.headers = e.headers;
    this.destination = e.destination;
    this.availableAt = e.availableAt;
  }

  /** A builder for an event of {@code type}, such as {@code payment.succeeded}. */
  public static Builder builder(String type) {
    return new Builder(type);
  }

  /** The event id: a UUIDv7 unless set. Transports send it as the message id ({@code webhook-id}, {@code message-id}). */
  public UUID id() {
    return id;
  }

  public String type() {
    return type;
  }

  public String aggregateType() {
    return aggregateType;
  }

  public String aggregateId() {
    return aggregateId;
  }

  /** The JSON payload, sent as it is (webhook bodies are signed over these exact bytes). */
  public String payload() {
    return payload;
  }

  public Map<String, String> headers() {
    return headers;
  }

  /** Where the relay sends it: {@code <route>} or {@code <route>:<detail>}, e.g. {@code webhook:we_123}. */
  public String destination() {
    return destination;
  }

  /** When it becomes due, if later than the commit (a scheduled event). */
  public Optional<Instant> availableAt() {
    return Optional.ofNullable(availableAt);
  }

  /** This event with another payload (the sealed one, written in its place). */
  OutboxEvent withPayload(String payload) {
    return new OutboxEvent(this, payload);
  }

  @Override
  public String toString() {
    return "OutboxEvent{" + id + ' ' + type + ' ' + aggregateType + '/' + aggregateId + " -> " + destination + '}';
  }

  /** Builds an {@link OutboxEvent}; {@link #aggregate}, {@link #payload} and {@link #destination} are required. */
  public static final class Builder {
    private UUID id;
    private final String type;
    private String aggregateType;
    private String aggregateId;
    private String payload;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private String destination;
    private Instant availableAt;

    private Builder(String type) {
      this.type = Limits.text("type", type, Limits.NAME);
    }

    public Builder id(UUID id) {
      this.id = Objects.requireNonNull(id, "id");
      return this;
    }

    /** The aggregate the event belongs to: the ordering key when its type is ordered. */
    public Builder aggregate(String aggregateType, String aggregateId) {
      this.aggregateType = Limits.text("aggregateType", aggregateType, Limits.AGGREGATE_TYPE);
      this.aggregateId = Limits.text("aggregateId", aggregateId, Limits.NAME);
      return this;
    }

    /** The JSON payload, at most {@link Outbox.Builder#maxPayloadBytes} bytes when enqueued. */
    public Builder payload(String json) {
      this.payload = Objects.requireNonNull(json, "payload");
      return this;
    }

    /** A transport header. Names are tokens; neither names nor values may contain line breaks. */
    public Builder header(String name, String value) {
      Limits.header(name, value);
      if (headers.size() >= Limits.MAX_HEADERS && !headers.containsKey(name)) {
        throw new IllegalArgumentException("at most " + Limits.MAX_HEADERS + " headers per event");
      }
      headers.put(name, value);
      return this;
    }

    public Builder destination(String destination) {
      this.destination = Limits.destination(destination);
      return this;
    }

    /** Deliver no earlier than {@code at}. */
    public Builder availableAt(Instant at) {
      this.availableAt = Objects.requireNonNull(at, "availableAt");
      return this;
    }

    public OutboxEvent build() {
      if (aggregateType == null) {
        throw new IllegalStateException("aggregate(type, id) is required: it is the event's ordering key");
      }
      if (payload == null) {
        throw new IllegalStateException("payload is required");
      }
      if (destination == null) {
        throw new IllegalStateException("destination is required, e.g. \"webhook:we_123\" or \"rabbitmq:payments\"");
      }
      return new OutboxEvent(this);
    }
  }
}
