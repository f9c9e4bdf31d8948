package dev.idem.spring.events;

import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.events.EventRoute;
import dev.idem.outbox.events.EventSerializer;
import dev.idem.outbox.events.Events;
import dev.idem.spring.internal.SpringDataSourceTransactions;
import dev.idem.spring.internal.TransactionCompletion;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Writes externalized application events to the outbox: an event published through Spring's
 * {@code ApplicationEventPublisher} whose class is {@link Externalized} (or a subclass of one) or listed in
 * {@code idem.events.routes} is enqueued in the active Spring transaction, on its connection of the outbox's data
 * source, serialised by the {@link EventSerializer} (the application's Jackson mapper by default). It is relayed only
 * if that transaction commits, and the relay is woken after the commit. Other events pass by untouched.
 *
 * <p>It runs in the publisher's thread even under an asynchronous event multicaster, since the event must join the
 * publisher's transaction. Outside a transaction, in one that holds no connection of the outbox's data source (its
 * manager manages another data source, or Kafka), or in one that has committed or rolled back already (its
 * after-commit or after-completion phase: a {@code @TransactionalEventListener(phase = AFTER_COMMIT)}, where Spring
 * still reports it active), it follows {@code idem.events.outside-transaction}: by default the publisher gets an
 * {@link IllegalStateException}. An event that cannot be written (it does not serialise, the outbox
 * refuses it) throws to the publisher too, which rolls its transaction back: an event is never dropped silently.
 * Thread-safe.
 */
public final class ExternalizedEvents implements ApplicationListener<ApplicationEvent> {
  private final Events events;
  private final DataSource dataSource;
  private final OutsideTransaction outsideTransaction;
  private final Set<String> servedRoutes;

  /**
   * Checks every route given and builds the events.
   *
   * @param routes the configured routes ({@code idem.events.routes}): class name to destination
   * @param annotated {@link Externalized} classes found at startup, checked now rather than at their first event
   * @param servedRoutes the routes of the application's {@code OutboxRoute} beans; empty when it has none (its relay
   *     runs elsewhere), and then destinations are not checked
   * @throws IllegalStateException naming the setting or class when a route is not valid, not served, or ordered by a
   *     key whose type the outbox does not order
   */
  public ExternalizedEvents(Outbox outbox, EventSerializer serializer, DataSource dataSource,
      OutsideTransaction outsideTransaction, Map<String, String> routes, Collection<Class<?>> annotated,
      Set<String> servedRoutes, ClassLoader classLoader) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.outsideTransaction = Objects.requireNonNull(outsideTransaction, "outsideTransaction");
    this.servedRoutes = Set.copyOf(servedRoutes);
    Events.Builder b = Events.builder(outbox).serializer(serializer).finder(this::annotatedRoute);
    Set<Class<?>> configured = new HashSet<>();
    for (Map.Entry<String, String> e : new TreeMap<>(routes).entrySet()) {
      String setting = "idem.events.routes[" + e.getKey() + "]";
      Class<?> eventClass;
      try {
        eventClass = Class.forName(e.getKey(), false, classLoader);
      } catch (ClassNotFoundException | LinkageError ex) {
        throw new IllegalStateException(setting + ": no such event class '" + e.getKey() + "'", ex);
      }
      b.route(checked(setting, () -> EventRoute.of(eventClass, eventClass.getSimpleName(), e.getValue())));
      configured.add(eventClass);
    }
    for (Class<?> c : annotated) {
      if (!configured.contains(c)) {
        b.route(annotatedRoute(c).orElseThrow(() -> new IllegalStateException(c.getName() + " is not @Externalized")));
      }
    }
    try {
      this.events = b.build();
    } catch (IllegalArgumentException ex) {
      throw new IllegalStateException(ex.getMessage() + " (idem.outbox.ordered-types)", ex);
    }
  }

  /** The events this listener writes, with their routes. */
  public Events events() {
    return events;
  }

  @Override
  public void onApplicationEvent(ApplicationEvent applicationEvent) {
    Object event = applicationEvent instanceof PayloadApplicationEvent<?> p ? p.getPayload() : applicationEvent;
    if (events.routeOf(event.getClass()).isEmpty()) {
      return;
    }
    if (SpringDataSourceTransactions.holdsConnectionOf(dataSource)) {
      Connection connection = DataSourceUtils.getConnection(dataSource);
      try {
        events.publish(JdbcTransaction.of(connection), event);
      } finally {
        DataSourceUtils.releaseConnection(connection, dataSource);
      }
      return;
    }
    boolean completing = TransactionCompletion.completing(dataSource);
    if (outsideTransaction == OutsideTransaction.FAIL && completing) {
      throw new IllegalStateException("event " + event.getClass().getName() + " was published after its Spring"
          + " transaction committed or rolled back (in its after-commit or after-completion phase: a"
          + " @TransactionalEventListener of phase AFTER_COMMIT, AFTER_ROLLBACK or AFTER_COMPLETION, a"
          + " TransactionSynchronization's afterCommit or afterCompletion), when its connection is part of no"
          + " transaction: publish it before the commit (in the transaction, or from a BEFORE_COMMIT listener), in a"
          + " transaction of its own (@Transactional(propagation = REQUIRES_NEW) on the listener), or set"
          + " idem.events.outside-transaction=own-transaction to write it in a transaction of its own");
    }
    boolean elsewhere = !completing && TransactionSynchronizationManager.isActualTransactionActive();
    if (outsideTransaction == OutsideTransaction.FAIL && elsewhere) {
      throw new IllegalStateException("event " + event.getClass().getName() + " was published in a Spring transaction"
          + " that holds no connection of the outbox's DataSource (" + dataSource + "): its transaction manager"
          + " manages another resource (another DataSource, Kafka), so the event cannot be written to the outbox with"
          + " the change it describes. Publish it in a transaction of the outbox DataSource's transaction manager, or"
          + " set idem.events.outside-transaction=own-transaction to write it in a transaction of its own");
    }
    if (outsideTransaction == OutsideTransaction.FAIL) {
      throw new IllegalStateException("event " + event.getClass().getName() + " was published outside a transaction,"
          + " so it cannot be written to the outbox with the change it describes: publish it inside a @Transactional"
          + " method, or set idem.events.outside-transaction=own-transaction to write it in a transaction of its own");
    }
    try {
      events.outbox().inTransaction(tx -> events.publish(tx, event));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("writing event " + event.getClass().getName() + " to the outbox failed: " + e,
          e);
    }
  }

  /** Runs in the publisher's thread: the event joins the publisher's transaction. */
  @Override
  public boolean supportsAsyncExecution() {
    return false;
  }

  /** The route an {@link Externalized} annotation on the class (or a superclass or interface) declares. */
  private Optional<EventRoute<?>> annotatedRoute(Class<?> eventClass) {
    MergedAnnotation<Externalized> a = MergedAnnotations.from(eventClass,
        MergedAnnotations.SearchStrategy.TYPE_HIERARCHY).get(Externalized.class);
    if (!a.isPresent()) {
      return Optional.empty();
    }
    Class<?> declaring = a.getSource() instanceof Class<?> c ? c : eventClass;
    String where = "@Externalized on " + declaring.getName();
    String type = a.getString("type").isEmpty() ? declaring.getSimpleName() : a.getString("type");
    String key = a.getString("key");
    String aggregate = a.getString("aggregate").isEmpty() ? type : a.getString("aggregate");
    return Optional.of(checked(where, () -> {
      EventRoute<?> route = EventRoute.of(eventClass, type, a.getString("value"));
      return key.isEmpty() ? route : route(route, aggregate, keyReader(eventClass, key, where));
    }));
  }

  @SuppressWarnings("unchecked")
  private static <E> EventRoute<E> route(EventRoute<E> route, String aggregate, Function<Object, String> key) {
    return route.orderedBy(aggregate, (Function<? super E, String>) (Function<?, String>) key);
  }

  private EventRoute<?> checked(String where, Supplier<EventRoute<?>> route) {
    EventRoute<?> r;
    try {
      r = route.get();
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(where + ": " + e.getMessage(), e);
    }
    if (!servedRoutes.isEmpty() && !servedRoutes.contains(r.route())) {
      throw new IllegalStateException(where + " sends to '" + r.destination() + "', but no OutboxRoute bean serves"
          + " route '" + r.route() + "' (routes: " + new TreeSet<>(servedRoutes) + ")");
    }
    return r;
  }

  /** Reads the ordering key through a public method without parameters: {@code key()} or {@code getKey()}. */
  private static Function<Object, String> keyReader(Class<?> eventClass, String key, String where) {
    String getter = "get" + Character.toUpperCase(key.charAt(0)) + key.substring(1);
    Method method = null;
    for (String name : List.of(key, getter)) {
      try {
        Method m = eventClass.getMethod(name);
        if (!Modifier.isStatic(m.getModifiers()) && m.getReturnType() != void.class) {
          method = m;
          break;
        }
      } catch (NoSuchMethodException ignored) {
        // try the next name
      }
    }
    if (method == null) {
      throw new IllegalArgumentException("key '" + key + "' names no public method " + key + "() or " + getter
          + "() of " + eventClass.getName());
    }
    Method reader = method;
    reader.trySetAccessible();
    return event -> {
      try {
        return String.valueOf(reader.invoke(event));
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(where + ": cannot read key " + reader.getName() + "(): " + e.getMessage(), e);
      } catch (InvocationTargetException e) {
        throw new IllegalStateException(where + ": key " + reader.getName() + "() failed: " + e.getCause(),
            e.getCause());
      }
    };
  }

  @Override
  public String toString() {
    return "ExternalizedEvents{" + events.routes() + ", outside a transaction: " + outsideTransaction + '}';
  }
}
