package dev.idem.outbox.events;

import dev.idem.core.UuidV7;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Domain events into the outbox: an event object published inside a transaction is written to the outbox in that
 * transaction, as an outbox event of the type and destination its {@link EventRoute} gives, its payload the JSON
 * that the {@link EventSerializer} makes of it. It is relayed only if the transaction commits; and once it commits,
 * the relays of its route are woken at once (see {@link Outbox}).
 *
 * <pre>{@code
 * Events events = Events.builder(outbox)
 *     .serializer(json::write)
 *     .route(EventRoute.of(PaymentSucceeded.class, "payment.succeeded", "webhook:payments"))
 *     .build();
 *
 * events.inTransaction(tx -> {
 *   insertPayment(JdbcTransaction.connectionOf(tx), payment);
 *   Events.publish(new PaymentSucceeded(payment.id())); // anywhere below, on this thread
 *   return null;
 * });
 * }</pre>
 *
 * <p>Failure rules: publishing an object whose class has no route, that does not serialise, or whose payload the
 * outbox refuses throws {@link IllegalArgumentException}, and publishing outside a transaction throws
 * {@link IllegalStateException}: the caller's transaction then rolls back if the exception leaves it, and nothing is
 * ever dropped silently. Immutable and thread-safe.
 */
public final class Events {
  private static final ThreadLocal<Deque<Bound>> CURRENT = new ThreadLocal<>();
  /** Classes remembered to have no route, at most: a stream of generated classes must not grow the cache for good. */
  private static final int MAX_CACHED = 4096;

  private final Outbox outbox;
  private final EventSerializer serializer;
  private final Map<Class<?>, EventRoute<?>> routes;
  private final Function<Class<?>, Optional<EventRoute<?>>> finder;
  private final Map<Class<?>, Optional<EventRoute<?>>> resolved = new ConcurrentHashMap<>();

  private record Bound(Events events, StoreTransaction tx) {}

  private Events(Builder b) {
    this.outbox = b.outbox;
    this.serializer = b.serializer;
    this.routes = Map.copyOf(b.routes);
    this.finder = b.finder == null ? c -> Optional.empty() : b.finder;
  }

  /** A builder of events written to {@code outbox}. */
  public static Builder builder(Outbox outbox) {
    return new Builder(outbox);
  }

  /** The outbox the events are written to. */
  public Outbox outbox() {
    return outbox;
  }

  /** Every route, one per event class. */
  public List<EventRoute<?>> routes() {
    return List.copyOf(routes.values());
  }

  /**
   * The route of events of {@code eventClass}: its own, else that of its nearest superclass with one, else that of
   * the first of its interfaces (and theirs) with one, else the one the {@link Builder#finder finder} gives.
   *
   * @throws IllegalArgumentException when the finder's route is ordered by a key whose type the outbox does not order
   */
  public Optional<EventRoute<?>> routeOf(Class<?> eventClass) {
    Optional<EventRoute<?>> route = resolved.get(eventClass);
    if (route == null) {
      // computed outside the map: a finder that throws leaves nothing cached, and may load classes of its own
      route = find(eventClass);
      if (route.isEmpty()) {
        route = Objects.requireNonNull(finder.apply(eventClass), "the route finder returned null");
        route.ifPresent(this::check);
      }
      if (route.isPresent() || resolved.size() < MAX_CACHED) {
        resolved.put(eventClass, route);
      }
    }
    return route;
  }

  private void check(EventRoute<?> r) {
    if (r.isOrdered() && !outbox.isOrdered(r.type())) {
      throw new IllegalArgumentException("event route " + r + " is ordered by a key, but the outbox does not"
          + " order type '" + r.type() + "': add it to the outbox's ordered types");
    }
  }

  private Optional<EventRoute<?>> find(Class<?> eventClass) {
    for (Class<?> c = eventClass; c != null; c = c.getSuperclass()) {
      if (routes.containsKey(c)) {
        return Optional.of(routes.get(c));
      }
    }
    Deque<Class<?>> interfaces = new ArrayDeque<>();
    for (Class<?> c = eventClass; c != null; c = c.getSuperclass()) {
      interfaces.addAll(List.of(c.getInterfaces()));
    }
    while (!interfaces.isEmpty()) {
      Class<?> i = interfaces.removeFirst();
      if (routes.containsKey(i)) {
        return Optional.of(routes.get(i));
      }
      interfaces.addAll(List.of(i.getInterfaces()));
    }
    return Optional.empty();
  }

  /**
   * Runs {@code work} in a new transaction of the outbox's store and commits it (rolls it back if the work throws or
   * marks it rollback-only), with that transaction bound to this thread for {@link #publish(Object)}. The relays of
   * the events published in it are woken once it has committed.
   */
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    Objects.requireNonNull(work, "work");
    return outbox.inTransaction(tx -> {
      Deque<Bound> bound = CURRENT.get();
      if (bound == null) {
        bound = new ArrayDeque<>(2);
        CURRENT.set(bound);
      }
      bound.push(new Bound(this, tx));
      try {
        return work.execute(tx);
      } finally {
        bound.pop();
        if (bound.isEmpty()) {
          CURRENT.remove();
        }
      }
    });
  }

  /**
   * Publishes {@code event} in the transaction that {@link #inTransaction} runs on this thread (the innermost one),
   * with the routes of the {@code Events} that runs it.
   *
   * @return the event id
   * @throws IllegalStateException when no transaction of {@link #inTransaction} is running on this thread
   * @throws IllegalArgumentException when the event's class has no route, it does not serialise, or the outbox
   *     refuses it (too large, not JSON)
   */
  public static UUID publish(Object event) {
    Objects.requireNonNull(event, "event");
    Deque<Bound> bound = CURRENT.get();
    if (bound == null || bound.isEmpty()) {
      throw new IllegalStateException("Events.publish(" + event.getClass().getName() + ") was called outside a"
          + " transaction: publish inside events.inTransaction(...), or pass the transaction to"
          + " events.publish(tx, event)");
    }
    Bound b = bound.peek();
    return b.events.publish(b.tx, event);
  }

  /**
   * Publishes {@code event} in {@code tx}, the caller's open transaction of the outbox store's kind (for JDBC,
   * {@code JdbcTransaction.of(connection)} with auto-commit off): it is relayed only if that transaction commits.
   *
   * @return the event id
   * @throws IllegalArgumentException when the event's class has no route, it does not serialise, or the outbox
   *     refuses it (too large, not JSON)
   * @throws IllegalStateException when {@code tx} is not an open transaction
   */
  public UUID publish(StoreTransaction tx, Object event) {
    Objects.requireNonNull(tx, "tx");
    return outbox.enqueue(tx, toOutboxEvent(event));
  }

  /**
   * The outbox event {@link #publish} writes for {@code event}, with a new id unless its route gives one.
   *
   * @throws IllegalArgumentException when the event's class has no route or it does not serialise
   */
  public OutboxEvent toOutboxEvent(Object event) {
    Objects.requireNonNull(event, "event");
    EventRoute<?> route = routeOf(event.getClass()).orElseThrow(() -> new IllegalArgumentException("no event route"
        + " for " + event.getClass().getName() + ": add EventRoute.of(" + event.getClass().getSimpleName()
        + ".class, type, destination) to the Events builder (routes exist for " + routes.keySet().stream()
        .map(Class::getName).sorted().toList() + ")"));
    String json;
    try {
      json = serializer.toJson(event);
    } catch (Exception e) {
      throw new IllegalArgumentException("event " + event.getClass().getName() + " (type " + route.type()
          + ") could not be serialised: " + e, e);
    }
    if (json == null) {
      throw new IllegalArgumentException("the serializer made no JSON of event " + event.getClass().getName());
    }
    return route.toOutboxEvent(event, json, UuidV7.next());
  }

  @Override
  public String toString() {
    return "Events{" + outbox + ", routes=" + routes.values() + '}';
  }

  /** Builds {@link Events}: a serializer and at least one route are required. Not thread-safe. */
  public static final class Builder {
    private final Outbox outbox;
    private EventSerializer serializer;
    private final Map<Class<?>, EventRoute<?>> routes = new LinkedHashMap<>();
    private Function<Class<?>, Optional<EventRoute<?>>> finder;

    private Builder(Outbox outbox) {
      this.outbox = Objects.requireNonNull(outbox, "outbox");
    }

    /** Makes the JSON payload of each event, such as {@code objectMapper::writeValueAsString}. */
    public Builder serializer(EventSerializer serializer) {
      this.serializer = Objects.requireNonNull(serializer, "serializer");
      return this;
    }

    /**
     * Adds the route of one event class.
     *
     * @throws IllegalArgumentException when that class has a route already
     */
    public Builder route(EventRoute<?> route) {
      Objects.requireNonNull(route, "route");
      if (routes.containsKey(route.eventClass())) {
        throw new IllegalArgumentException("event class " + route.eventClass().getName() + " has a route already: "
            + routes.get(route.eventClass()));
      }
      routes.put(route.eventClass(), route);
      return this;
    }

    /**
     * Finds the route of an event class that has none here (nor a superclass or interface of it), once per class:
     * for routes declared on the event classes themselves, such as the Spring Boot starter's {@code @Externalized}.
     * Default: none.
     */
    public Builder finder(Function<Class<?>, Optional<EventRoute<?>>> finder) {
      this.finder = Objects.requireNonNull(finder, "finder");
      return this;
    }

    /**
     * Builds the events.
     *
     * @throws IllegalStateException when there is no serializer, or neither a route nor a finder
     * @throws IllegalArgumentException when a route is ordered by a key but the outbox does not order its type
     */
    public Events build() {
      if (serializer == null) {
        throw new IllegalStateException("a serializer is required, e.g. serializer(objectMapper::writeValueAsString)");
      }
      if (routes.isEmpty() && finder == null) {
        throw new IllegalStateException("at least one route(EventRoute.of(eventClass, type, destination)) is required");
      }
      Events events = new Events(this);
      routes.values().forEach(events::check);
      return events;
    }
  }
}
