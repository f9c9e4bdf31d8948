package dev.idem.spring.listener;

import dev.idem.core.spi.Sleeper;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.ConsumerEngine;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.DeadLetterHeaders;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.History;
import dev.idem.outbox.consumer.Reason;
import dev.idem.spring.Idempotent;
import dev.idem.spring.internal.AnnotatedBeans;
import dev.idem.spring.internal.SpringDataSourceTransactions;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.Advisor;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.MethodMatchers;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionManager;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.interceptor.TransactionAttributeSourceAdvisor;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs each call of an {@link IdempotentListener} method through the inbox, in a Spring transaction that commits
 * before the call returns to the container. Its collaborators are looked up, and every such method is found and
 * checked, once every singleton exists (before any container starts), so that a bad one fails the start.
 *
 * <p>Implementation note: failures are answered in the listener thread, by the {@link ConsumerEngine}'s rule. A retry
 * or a pause waits the decision's backoff and tries again, in a new transaction, without handing the message back:
 * neither broker could wait before a redelivery without blocking the partition (Kafka) or spinning (RabbitMQ's
 * requeue delivers again at once). One delivery is held at most {@code idem.listeners.max-hold}; then it is handed
 * back ({@link ListenerRetryLaterException}) and its history stays in memory (at most 10,000 messages, the least
 * recently failed forgotten first), so the redelivery goes on counting. A message given up on throws
 * {@link ListenerGaveUpException}. Thread-safe: the containers' threads call it at once.
 */
final class IdempotentListenerInterceptor implements MethodInterceptor, SmartInitializingSingleton {
  private static final System.Logger LOG = System.getLogger(IdempotentListenerInterceptor.class.getName());
  private static final int MAX_REMEMBERED = 10_000;

  private final ListableBeanFactory beans;
  private final ObjectProvider<Inbox> inboxes;
  private final ObjectProvider<PlatformTransactionManager> transactionManagers;
  private final ObjectProvider<ConsumerListener> listeners;
  private final ObjectProvider<Clock> clocks;
  private final ObjectProvider<IdemListenersProperties> properties;
  private final Supplier<Function<Object, byte[]>> jsonWriter;
  private final Sleeper sleeper;
  private final Map<Method, ListenerMethod> methods = new ConcurrentHashMap<>();
  private final AtomicInteger outages = new AtomicInteger();
  private final Map<String, Failures> failures = Collections.synchronizedMap(new LinkedHashMap<>(64, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Failures> eldest) {
      return size() > MAX_REMEMBERED;
    }
  });
  /**
   * Messages given up on whose dead letter was not published, with the failed publications so far: given up on again,
   * unrun, when they come back.
   */
  private final Map<String, Unsent> unsent = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Unsent> eldest) {
      return size() > MAX_REMEMBERED;
    }
  });
  private volatile Running running;

  IdempotentListenerInterceptor(ListableBeanFactory beans, ObjectProvider<Inbox> inboxes,
      ObjectProvider<PlatformTransactionManager> transactionManagers, ObjectProvider<ConsumerListener> listeners,
      ObjectProvider<Clock> clocks, ObjectProvider<IdemListenersProperties> properties,
      Supplier<Function<Object, byte[]>> jsonWriter,
      Sleeper sleeper) {
    this.beans = beans;
    this.inboxes = inboxes;
    this.transactionManagers = transactionManagers;
    this.listeners = listeners;
    this.clocks = clocks;
    this.properties = properties;
    this.jsonWriter = jsonWriter;
    this.sleeper = sleeper;
  }

  /**
   * What the calls run with, once the application has started; {@code republishes}: whether RabbitMQ messages given
   * up on are republished by {@link RabbitDeadLetters}, which then reports them.
   */
  private record Running(Inbox inbox, DataSource dataSource, TransactionTemplate template, ConsumerEngine engine,
      Duration maxHold, ConsumerListener listener, Clock clock, Function<Object, byte[]> json, boolean republishes) {}

  /** A message given up on whose dead letter failed {@code failed} times in a row. */
  private record Unsent(ListenerGaveUpException gaveUp, int failed) {}

  /** A message's failures so far: what the engine needs, and a line per counted failure for the dead letter. */
  private record Failures(History history, List<String> lines) {}

  @Override
  public void afterSingletonsInstantiated() {
    IdemListenersProperties settings = properties.getIfAvailable(IdemListenersProperties::new);
    ConsumerEngine engine = settings.engine();
    List<AnnotatedBeans.Found<IdempotentListener>> listenerBeans = AnnotatedBeans.find(beans, IdempotentListener.class);
    List<ListenerMethod> found = scan(listenerBeans);
    if (found.isEmpty()) {
      return;
    }
    checkProxied(listenerBeans);
    Inbox inbox = inboxes.getIfUnique();
    String first = found.get(0).source;
    if (inbox == null) {
      throw new IllegalStateException("@IdempotentListener methods exist (" + first + " ...) but the application has"
          + " no Inbox bean: add dev.idem:idem-outbox with one DataSource (the starter then makes a JDBC inbox on it),"
          + " or define one Inbox bean on a JdbcInboxStore");
    }
    if (!(inbox.store() instanceof JdbcInboxStore store)) {
      throw new IllegalStateException("@IdempotentListener methods exist (" + first + " ...) but the Inbox bean's"
          + " store is " + inbox.store().getClass().getName() + ", not a JdbcInboxStore: the listener's work joins"
          + " the inbox's transaction through its DataSource, so the inbox must store its rows through JDBC");
    }
    DataSource dataSource = store.dataSource();
    PlatformTransactionManager manager = managerOf(dataSource);
    if (manager == null) {
      throw new IllegalStateException("@IdempotentListener methods exist (" + first + " ...) but no Spring"
          + " transaction manager manages the inbox's DataSource: define one (Spring Boot makes a"
          + " DataSourceTransactionManager or JpaTransactionManager on the DataSource), or make it the @Primary one");
    }
    for (ListenerMethod m : found) {
      checkTransactionManager(m, manager);
      if (m.broker == ListenerMethod.Broker.KAFKA) {
        KafkaContainerFactories.check(beans, m, dataSource);
      }
      if (m.payloadIsJson() && !JsonWriter.available(beans)) {
        throw new IllegalStateException("@IdempotentListener on " + m.source + " takes no raw message, so its payload"
            + " is its arguments as JSON, which needs Jackson 3 (tools.jackson.core:jackson-databind): add it, or"
            + " take the raw message (a ConsumerRecord, an AMQP Message or a Spring Message<?>) as a parameter");
      }
    }
    TransactionTemplate template = new TransactionTemplate(manager);
    template.setPropagationBehavior(TransactionTemplate.PROPAGATION_REQUIRED);
    Function<Object, byte[]> json = jsonWriter.get();
    for (ListenerMethod m : found) {
      methods.put(m.method, m);
    }
    List<ConsumerListener> all = listeners.orderedStream().toList();
    running = new Running(inbox, dataSource, template, engine, settings.getMaxHold(), new Listeners(all),
        clocks.getIfAvailable(Clock::systemUTC), json, settings.getRabbit().getDeadLetterExchange() != null);
    LOG.log(System.Logger.Level.INFO, "idempotent listeners on " + inbox + ": " + found.stream()
        .map(m -> m.source + " (consumer '" + m.consumer + "', " + m.broker + ")").toList() + "; " + engine);
  }

  /** Every {@link IdempotentListener} method of {@code found}, checked; fails on a bad one. */
  private static List<ListenerMethod> scan(List<AnnotatedBeans.Found<IdempotentListener>> found) {
    Map<String, ListenerMethod> byConsumer = new LinkedHashMap<>();
    Map<Method, ListenerMethod> seen = new LinkedHashMap<>();
    for (AnnotatedBeans.Found<IdempotentListener> bean : found) {
      for (Map.Entry<Method, IdempotentListener> e : bean.methods().entrySet()) {
        if (seen.containsKey(e.getKey())) {
          continue; // one method seen on two beans of its class
        }
        if (AnnotatedElementUtils.hasAnnotation(e.getKey(), Idempotent.class)) {
          throw new IllegalStateException(ListenerMethod.source(bean.type(), e.getKey()) + " has both @Idempotent and"
              + " @IdempotentListener: keep @IdempotentListener, which makes each message id take effect once");
        }
        ListenerMethod m = ListenerMethod.of(bean.type(), e.getKey(), e.getValue());
        seen.put(m.method, m);
        ListenerMethod previous = byConsumer.putIfAbsent(m.consumer, m);
        if (previous != null) {
          throw new IllegalStateException("@IdempotentListener consumer '" + m.consumer + "' is declared twice: on "
              + previous.source + " and on " + m.source + "; each method needs a consumer of its own (a message"
              + " one of them processed would be a duplicate to the other)");
        }
      }
    }
    return new ArrayList<>(seen.values());
  }

  /**
   * Each singleton with {@link IdempotentListener} methods must be a proxy that runs this interceptor: a bean that is
   * not (registered as an object, replaced by a post-processor, created before the advisor existed) would run its
   * messages without the inbox.
   */
  private void checkProxied(List<AnnotatedBeans.Found<IdempotentListener>> found) {
    if (!(beans instanceof ConfigurableListableBeanFactory factory)) {
      return;
    }
    for (AnnotatedBeans.Found<IdempotentListener> bean : found) {
      if (!factory.containsSingleton(bean.name()) || factory.isFactoryBean(bean.name())) {
        continue;
      }
      Object instance = factory.getSingleton(bean.name());
      boolean advised = instance instanceof Advised a && Arrays.stream(a.getAdvisors())
          .anyMatch(advisor -> advisor.getAdvice() == this);
      if (!advised) {
        throw new IllegalStateException("bean '" + bean.name() + "' (" + bean.type().getName() + ") has"
            + " @IdempotentListener methods but is not a Spring AOP proxy running them through the inbox, so its"
            + " messages would skip it: let Spring create the bean (not registerSingleton or a post-processor that"
            + " replaces it), and do not make a BeanPostProcessor depend on it (it would be created before the"
            + " advisor)");
      }
      checkTransactionAdvisorsAfter(bean, ((Advised) instance).getAdvisors());
    }
  }

  /**
   * No transaction advisor may run a listener method before this interceptor (the proxy's advisors are in the order
   * they run): the inbox's transaction would join that transaction instead of being its own, so a failure could not
   * be rolled back and tried again here, and would reach the container as it is.
   */
  private void checkTransactionAdvisorsAfter(AnnotatedBeans.Found<IdempotentListener> bean, Advisor[] advisors) {
    for (Advisor advisor : advisors) {
      if (advisor.getAdvice() == this) {
        return;
      }
      if (!(advisor.getAdvice() instanceof TransactionAspectSupport)
          && !(advisor instanceof TransactionAttributeSourceAdvisor)) {
        continue;
      }
      for (Method method : bean.methods().keySet()) {
        if (appliesTo(advisor, bean.type(), method)) {
          String order = advisor instanceof Ordered o ? "order " + o.getOrder() : "no order";
          throw new IllegalStateException("@IdempotentListener on " + ListenerMethod.source(bean.type(), method)
              + " runs inside a transaction advisor ordered before Idem's (" + order + ", Idem's "
              + IdemListenersAutoConfiguration.ORDER + "): the inbox's transaction would join the method's instead of"
              + " being its own, so a failure could not be rolled back and tried again, and would reach the container"
              + " as it is. Order the transaction advisor after Idem's (@EnableTransactionManagement's default order,"
              + " or any order above " + IdemListenersAutoConfiguration.ORDER + ")");
        }
      }
    }
  }

  private static boolean appliesTo(Advisor advisor, Class<?> type, Method method) {
    if (!(advisor instanceof PointcutAdvisor p)) {
      return true;
    }
    return p.getPointcut().getClassFilter().matches(type)
        && MethodMatchers.matches(p.getPointcut().getMethodMatcher(), method, type, false);
  }

  /** The one transaction manager (or the primary one) that manages {@code dataSource}, or null. */
  private PlatformTransactionManager managerOf(DataSource dataSource) {
    PlatformTransactionManager unique = transactionManagers.getIfUnique();
    if (unique != null && manages(unique, dataSource)) {
      return unique;
    }
    List<PlatformTransactionManager> managing = transactionManagers.orderedStream()
        .filter(m -> manages(m, dataSource)).toList();
    return managing.size() == 1 ? managing.get(0) : null;
  }

  /** A method's own {@code @Transactional} must name, or default to, the manager of the inbox's transaction. */
  private void checkTransactionManager(ListenerMethod m, PlatformTransactionManager inboxManager) {
    if (m.transactionManager == null) {
      return;
    }
    String named = m.transactionManager.isEmpty() ? "@Transactional" : "@Transactional(\"" + m.transactionManager
        + "\")";
    TransactionManager resolved;
    try {
      resolved = m.transactionManager.isEmpty() ? beans.getBeanProvider(TransactionManager.class).getIfUnique()
          : BeanFactoryAnnotationUtils.qualifiedBeanOfType(beans, TransactionManager.class, m.transactionManager);
    } catch (BeansException e) {
      resolved = null;
    }
    if (resolved != inboxManager) {
      throw new IllegalStateException("@IdempotentListener on " + m.source + " is " + named + ", which "
          + (resolved == null ? "names no single transaction manager" : "runs on another transaction manager ("
          + resolved + ")") + " than the inbox's (" + inboxManager + "): the inbox row is written in the"
          + " transaction of the inbox's DataSource, and writes under another transaction manager would commit apart"
          + " from it. Name the inbox's transaction manager, or drop @Transactional");
    }
  }

  private static boolean manages(PlatformTransactionManager manager, DataSource dataSource) {
    return SpringDataSourceTransactions.dataSourceOf(manager) == dataSource;
  }

  /**
   * The checked {@link IdempotentListener} method of {@code broker} that a container calls: {@code method} of
   * {@code bean} (a proxy or not), or, without a method (a class-level listener), any of the bean's class; or null.
   */
  ListenerMethod listenerMethod(Object bean, Method method, ListenerMethod.Broker broker) {
    Class<?> target = AopUtils.getTargetClass(bean);
    if (method != null) {
      ListenerMethod m = methods.get(AopUtils.getMostSpecificMethod(method, target));
      return m != null && m.broker == broker ? m : null;
    }
    for (ListenerMethod m : methods.values()) {
      if (m.broker == broker && m.method.getDeclaringClass().isAssignableFrom(target)) {
        return m;
      }
    }
    return null;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Running r = running;
    Class<?> target = invocation.getThis() == null ? invocation.getMethod().getDeclaringClass()
        : AopUtils.getTargetClass(invocation.getThis());
    Method specific = AopUtils.getMostSpecificMethod(invocation.getMethod(), target);
    ListenerMethod m = methods.get(specific);
    if (r == null || m == null) {
      throw new IllegalStateException("@IdempotentListener method " + specific + " was called before the"
          + " application finished starting, or on a bean the startup scan did not see: its messages cannot go"
          + " through the inbox");
    }
    process(r, m, invocation);
    return null;
  }

  /**
   * Reads the call's message and runs it through the inbox, trying again as the engine decides. A message without an
   * id, or with one the inbox cannot hold, is refused at once; any other failure, computing its id or payload or in
   * the method, is the method's: counted, tried again, given up on at the last attempt.
   */
  private void process(Running r, ListenerMethod m, MethodInvocation invocation) {
    String key = null;
    History history = History.NONE;
    List<String> lines = List.of();
    Instant holdUntil = r.clock().instant().plus(r.maxHold());
    while (true) {
      String id;
      String source = null;
      InboxEvent event = null;
      Throwable thrown = null;
      try {
        ListenerMethod.Delivery delivery = m.delivery(invocation.getThis(), invocation.getArguments(), beans,
            r.json());
        id = delivery.id();
        source = delivery.source();
        if (id == null) {
          throw refuse(r, m, null, source, Reason.MISSING_ID, "message without an id", null);
        }
        try {
          event = new InboxEvent(id, source, delivery.payload(), delivery.message());
        } catch (IllegalArgumentException e) {
          throw refuse(r, m, id, source, Reason.INVALID_ID, e.getMessage(), e);
        }
      } catch (ListenerMethod.Unreadable e) {
        id = e.id();
        thrown = e;
      } catch (IllegalArgumentException e) {
        throw refuse(r, m, null, null, Reason.INVALID_ID, "the message's id could not be read: " + describe(e), e);
      }
      if (key == null && id != null) {
        key = m.consumer + '\u0000' + id;
        Unsent again = unsent.get(key);
        if (again != null) {
          throw gaveUp(m, again.gaveUp()); // its dead letter failed: sent again without running the method
        }
        Failures known = failures.get(key);
        if (known != null) {
          history = known.history();
          lines = known.lines();
        }
      }
      boolean[] own = {true};
      InboxResult result = null;
      if (event != null) {
        InboxEvent taken = event;
        try {
          result = r.template().execute(status -> {
            own[0] = status.isNewTransaction();
            Connection c = DataSourceUtils.getConnection(r.dataSource());
            try {
              return r.inbox().process(JdbcTransaction.of(c), m.consumer, taken, (tx, e) -> {
                proceed(invocation);
                status.flush(); // JPA: what the method persisted fails here, not after the inbox row's checks
                return null;
              });
            } finally {
              DataSourceUtils.releaseConnection(c, r.dataSource());
            }
          });
        } catch (VirtualMachineError e) {
          throw e;
        } catch (RuntimeException | Error e) {
          if (!own[0]) {
            throw e; // the caller's transaction: only its owner can roll it back and run the message again
          }
          thrown = e;
        }
      }
      if (thrown == null) {
        outages.set(0);
        if (key != null) {
          failures.remove(key);
        }
        if (result.duplicate()) {
          r.listener().duplicate(m.consumer, source, id);
        } else {
          r.listener().processed(m.consumer, source, id);
        }
        return;
      }
      // a rollback that failed too (the connection is gone) hides what failed first: judge that
      Throwable e = thrown instanceof TransactionSystemException t && t.getApplicationException() != null
          ? t.getApplicationException() : thrown;
      History before = history.withOutages(outages.get());
      // no transaction could be opened: the message's work never started, so it is the database's failure even
      // when the database answers again by the time a health check would ask
      Decision d = e instanceof CannotCreateTransactionException ? r.engine().decide(Reason.DATABASE_DOWN, before)
          : r.engine().failed(e, before, r.inbox().store());
      Throwable cause = e instanceof InboxHandlerException && e.getCause() != null ? e.getCause() : e;
      if (d.counted()) {
        lines = DeadLetterHeaders.append(lines, DeadLetterHeaders.attempt(Instant.now(r.clock()), cause));
      }
      history = history.next(d);
      failed(r, m, id, source, d, cause, key, history, lines, holdUntil);
    }
  }

  /** Carries out {@code d}: waits before the next try, or throws to give the message up or hand it back. */
  private void failed(Running r, ListenerMethod m, String id, String source, Decision d, Throwable cause, String key,
      History next, List<String> lines, Instant holdUntil) {
    switch (d.action()) {
      case PAUSE -> {
        outages.incrementAndGet();
        r.listener().paused(m.consumer, source, id, d, cause);
      }
      case RETRY -> {
        outages.set(0);
        r.listener().retried(m.consumer, source, id, d, cause);
      }
      case DEAD_LETTER -> {
        outages.set(0);
        if (key != null) {
          failures.remove(key);
        }
        if (!republished(r, m)) {
          r.listener().deadLettered(m.consumer, source, id, d, cause);
        }
        LOG.log(System.Logger.Level.WARNING, "consumer '" + m.consumer + "': giving up on message " + id + " ("
            + d + "): " + describe(cause));
        throw gaveUp(m, new ListenerGaveUpException(m.consumer, id, d, lines, cause));
      }
      default -> throw refuse(r, m, id, source, d.reason(), "refused by the inbox: " + describe(cause),
          cause);
    }
    if (d.action() == Action.RETRY && d.counted()) {
      LOG.log(System.Logger.Level.INFO, "consumer '" + m.consumer + "': message " + id + " failed (attempt "
          + d.attempts() + " of " + r.engine().maxAttempts() + "), trying again after " + d.after().toMillis()
          + " ms: " + describe(cause));
    }
    if (key != null) {
      failures.put(key, new Failures(next.withOutages(0), lines));
    }
    if (r.clock().instant().plus(d.after()).isAfter(holdUntil)) {
      throw handBack(m, new ListenerRetryLaterException("consumer '" + m.consumer + "': message " + id + " was held "
          + r.maxHold() + " (idem.listeners.max-hold) waiting between tries; handing it back for a"
          + " redelivery after " + d, cause));
    }
    try {
      sleeper.sleep(d.after());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw handBack(m, new ListenerRetryLaterException("consumer '" + m.consumer + "': interrupted while waiting"
          + " to try message " + id + " again; handing it back", cause));
    }
  }

  /** Whether {@link RabbitDeadLetters} republishes what {@code m} gives up on, and reports it once confirmed. */
  private static boolean republished(Running r, ListenerMethod m) {
    return r.republishes() && m.rejectsAsAmqp();
  }

  /**
   * The dead letter of a message given up on was not published; the failure is told to the listeners. Below
   * {@code attempts} failures in a row the message is to be handed back: when it comes again it is given up on at
   * once, without running the method. Returns whether to stop trying (at {@code attempts}, or at once for a message
   * without an id) and reject it without requeue instead, which is then reported as the message given up on.
   * {@code attempts} 0: a failure that counts nothing (the broker did not answer, or the connection is down), after
   * which the message is always handed back.
   */
  boolean deadLetterFailed(ListenerGaveUpException gaveUp, String source, Throwable error, int attempts) {
    Running r = running;
    if (r != null) {
      r.listener().deadLetterFailed(gaveUp.consumer(), source, gaveUp.messageId(), error);
    }
    boolean counted = attempts > 0;
    if (gaveUp.messageId() == null) {
      if (counted) {
        report(gaveUp, source);
      }
      return counted;
    }
    String key = gaveUp.consumer() + '\u0000' + gaveUp.messageId();
    Unsent before = unsent.get(key);
    int failed = (before == null ? 0 : before.failed()) + (counted ? 1 : 0);
    if (counted && failed >= attempts) {
      unsent.remove(key);
      report(gaveUp, source);
      return true;
    }
    unsent.put(key, new Unsent(gaveUp, failed));
    return false;
  }

  /** The dead letter of a message given up on was confirmed: reported to the listeners. */
  void deadLettered(ListenerGaveUpException gaveUp, String source) {
    if (gaveUp.messageId() != null) {
      unsent.remove(gaveUp.consumer() + '\u0000' + gaveUp.messageId());
    }
    report(gaveUp, source);
  }

  private void report(ListenerGaveUpException gaveUp, String source) {
    Running r = running;
    if (r == null) {
      return;
    }
    Decision d = gaveUp.decision();
    if (d.action() == Action.REJECT) {
      r.listener().rejected(gaveUp.consumer(), source, gaveUp.messageId(), d.reason(), gaveUp.detail());
    } else {
      r.listener().deadLettered(gaveUp.consumer(), source, gaveUp.messageId(), d, gaveUp.getCause());
    }
  }

  /** A message that cannot be taken (no id, an id the inbox cannot hold): rejected, never retried. */
  private RuntimeException refuse(Running r, ListenerMethod m, String id, String source, Reason reason, String detail,
      Throwable cause) {
    Decision d = r.engine().refused(reason);
    if (!republished(r, m)) {
      r.listener().rejected(m.consumer, source, id, reason, detail);
    }
    LOG.log(System.Logger.Level.WARNING, "consumer '" + m.consumer + "': rejecting message " + id + " (" + d + "): "
        + detail);
    return gaveUp(m, new ListenerGaveUpException(m.consumer, id, d, List.of(), cause, detail));
  }

  /**
   * The exception the method's container takes as "deliver again": on RabbitMQ Spring AMQP's immediate requeue,
   * wrapping ours, which requeues even with {@code default-requeue-rejected=false}; else ours.
   */
  private static RuntimeException handBack(ListenerMethod m, ListenerRetryLaterException e) {
    return m.rejectsAsAmqp() ? AmqpMessages.requeue(e) : e;
  }

  /** The exception the method's container takes as "give up": RabbitMQ's own, wrapping ours, or ours. */
  private static RuntimeException gaveUp(ListenerMethod m, ListenerGaveUpException e) {
    return m.rejectsAsAmqp() ? AmqpMessages.rejectWithoutRequeue(e) : e;
  }

  /**
   * Calls the method through the rest of its advice chain; a {@link Throwable} that is neither an exception nor an
   * error is wrapped. Each try proceeds on a clone: an invocation remembers how far down the chain it went, so
   * proceeding on it again would call the method directly and skip the advice after this one.
   */
  private static void proceed(MethodInvocation invocation) throws Exception {
    MethodInvocation attempt = invocation instanceof ProxyMethodInvocation p ? p.invocableClone() : invocation;
    try {
      attempt.proceed();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }

  private static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message.replace('\n', ' '));
  }

  /** Every {@link ConsumerListener} bean; what one throws is ignored. */
  private record Listeners(List<ConsumerListener> all) implements ConsumerListener {
    private void each(Consumer<ConsumerListener> call) {
      for (ConsumerListener l : all) {
        try {
          call.accept(l);
        } catch (RuntimeException ignored) {
          // listeners must not change the outcome
        }
      }
    }

    @Override
    public void processed(String consumer, String source, String messageId) {
      each(l -> l.processed(consumer, source, messageId));
    }

    @Override
    public void duplicate(String consumer, String source, String messageId) {
      each(l -> l.duplicate(consumer, source, messageId));
    }

    @Override
    public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
      each(l -> l.retried(consumer, source, messageId, decision, error));
    }

    @Override
    public void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {
      each(l -> l.paused(consumer, source, messageId, decision, error));
    }

    @Override
    public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
      each(l -> l.rejected(consumer, source, messageId, reason, detail));
    }

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      each(l -> l.deadLettered(consumer, source, messageId, decision, error));
    }

    @Override
    public void deadLetterFailed(String consumer, String source, String messageId, Throwable error) {
      each(l -> l.deadLetterFailed(consumer, source, messageId, error));
    }
  }
}
