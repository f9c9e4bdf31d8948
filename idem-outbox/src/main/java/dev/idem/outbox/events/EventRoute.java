package dev.idem.outbox.events;

import dev.idem.outbox.OutboxEvent;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Function;

/**
 * Where the events of one class go: their outbox event type, their destination ({@code <route>} or
 * {@code <route>:<detail>}, the relay route sending them is the part before {@code ':'}), and optionally their
 * ordering key, headers and id. Immutable: each {@code with} method returns a new route.
 *
 * <pre>{@code
 * EventRoute<PaymentSucceeded> route = EventRoute.of(PaymentSucceeded.class, "payment.succeeded", "webhook:payments")
 *     .orderedBy("payment", PaymentSucceeded::paymentId)
 *     .headers(e -> Map.of("x-tenant", e.tenant()));
 * }</pre>
 *
 * @param <E> the event class
 */
public final class EventRoute<E> {
  /** The aggregate type of events without an ordering key: each is an aggregate of its own, keyed by its id. */
  public static final String UNORDERED = "event";

  private final Class<E> eventClass;
  private final String type;
  private final String destination;
  private final String aggregateType;
  private final Function<? super E, String> key;
  private final Function<? super E, Map<String, String>> headers;
  private final Function<? super E, UUID> id;

  private EventRoute(Class<E> eventClass, String type, String destination, String aggregateType,
      Function<? super E, String> key, Function<? super E, Map<String, String>> headers,
      Function<? super E, UUID> id) {
    this.eventClass = eventClass;
    this.type = type;
    this.destination = destination;
    this.aggregateType = aggregateType;
    this.key = key;
    this.headers = headers;
    this.id = id;
  }

  /**
   * The events of {@code eventClass} (and of its subclasses without a route of their own) become outbox events of
   * {@code type}, sent to {@code destination}.
   *
   * @throws IllegalArgumentException when the type or the destination is not one the outbox accepts
   */
  public static <E> EventRoute<E> of(Class<E> eventClass, String type, String destination) {
    Objects.requireNonNull(eventClass, "eventClass");
    // the outbox's own checks of a type and a destination
    OutboxEvent.builder(type).destination(destination);
    return new EventRoute<>(eventClass, type, destination, UNORDERED, null, null, null);
  }

  /**
   * Events with the same key (an aggregate of {@code aggregateType}) are delivered in the order they were published;
   * the outbox must order their type ({@code Outbox.Builder.orderedTypes}), which {@link Events.Builder#build}
   * checks. The key is at most 255 characters.
   */
  public EventRoute<E> orderedBy(String aggregateType, Function<? super E, String> key) {
    OutboxEvent.builder(type).aggregate(aggregateType, "k"); // the outbox's check of an aggregate type
    return new EventRoute<>(eventClass, type, destination, aggregateType, Objects.requireNonNull(key, "key"), headers,
        id);
  }

  /** Transport headers of each event (names are tokens, values visible ASCII; at most 32). */
  public EventRoute<E> headers(Function<? super E, Map<String, String>> headers) {
    return new EventRoute<>(eventClass, type, destination, aggregateType, key, Objects.requireNonNull(headers,
        "headers"), id);
  }

  /**
   * The event id each event is sent with (receivers deduplicate on it): for events that carry one of their own.
   * Default: a new UUIDv7 per publish.
   */
  public EventRoute<E> id(Function<? super E, UUID> id) {
    return new EventRoute<>(eventClass, type, destination, aggregateType, key, headers, Objects.requireNonNull(id,
        "id"));
  }

  public Class<E> eventClass() {
    return eventClass;
  }

  /** The outbox event type, such as {@code payment.succeeded}. */
  public String type() {
    return type;
  }

  /** Where the relay sends the events: {@code <route>} or {@code <route>:<detail>}. */
  public String destination() {
    return destination;
  }

  /** The relay route of the destination: its part before {@code ':'}. */
  public String route() {
    int colon = destination.indexOf(':');
    return colon < 0 ? destination : destination.substring(0, colon);
  }

  /** Whether the events carry an ordering key ({@link #orderedBy}). */
  public boolean isOrdered() {
    return key != null;
  }

  /**
   * The outbox event for {@code event}, with {@code payload} as its JSON.
   *
   * @throws IllegalArgumentException when a key, header or id the route's functions give is not acceptable
   */
  OutboxEvent toOutboxEvent(Object event, String payload, UUID defaultId) {
    E e = eventClass.cast(event);
    UUID eventId = id == null ? defaultId : Objects.requireNonNull(id.apply(e), () -> "the id of " + describe(e));
    String k = key == null ? eventId.toString()
        : Objects.requireNonNull(key.apply(e), () -> "the ordering key of " + describe(e));
    OutboxEvent.Builder b = OutboxEvent.builder(type).id(eventId).aggregate(aggregateType, k).payload(payload)
        .destination(destination);
    if (headers != null) {
      Map<String, String> h = Objects.requireNonNull(headers.apply(e), () -> "the headers of " + describe(e));
      h.forEach(b::header);
    }
    return b.build();
  }

  private String describe(Object event) {
    return "event " + event.getClass().getName() + " (type " + type + ")";
  }

  @Override
  public String toString() {
    return "EventRoute{" + eventClass.getName() + " -> " + type + " @ " + destination
        + (key == null ? "" : ", ordered by " + aggregateType) + '}';
  }
}
