package dev.idem.spring.method;

import dev.idem.core.Codec;
import dev.idem.core.Idem;
import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentCall;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.Scope;
import dev.idem.core.StoreException;
import dev.idem.core.WorkFailedException;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import dev.idem.spring.boot.IdemAutoConfiguration;
import dev.idem.spring.boot.IdemProperties;
import dev.idem.spring.internal.SpringDataSourceTransactions;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.ObjectMapper;

/**
 * Runs each call of an {@code @Idempotent} bean method as an {@link IdempotentCall}. Its collaborators are looked up
 * after every singleton exists, when it also checks every such method, so that a bad one fails the start.
 *
 * <p>ATOMIC calls on the JDBC store run in a Spring transaction (the caller's, or a new one) whose connection the
 * store joins: the method's JDBC and JPA writes (flushed before the record is written) commit with the record. A
 * kept exception is recorded after that transaction rolled back, in a store transaction of its own, on a connection
 * of its own when an outer method or route still holds the store's binding.
 */
final class IdempotentMethodInterceptor implements MethodInterceptor, SmartInitializingSingleton {
  private static final System.Logger LOG = System.getLogger(IdempotentMethodInterceptor.class.getName());
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();
  private static final int MAX_ATTEMPTS = 8;
  /**
   * The property that lets ATOMIC methods start when the store cannot join their Spring transaction: their records
   * then commit apart from what they write through Spring.
   */
  static final String ALLOW_SEPARATE_COMMITS = "idem.methods.allow-separate-commits";

  private final ListableBeanFactory beans;
  private final ObjectProvider<Idem> idems;
  private final ObjectProvider<ObjectMapper> mappers;
  private final ObjectProvider<PlatformTransactionManager> transactionManagers;
  private final ObjectProvider<IdemProperties> properties;
  private final boolean allowSeparateCommits;
  /** By bean class and method: beans of several classes that inherit one method each have their own operation. */
  private final Map<Target, IdempotentMethod> methods = new ConcurrentHashMap<>();
  /** The transaction templates of methods with an isolation or a timeout of their own, made once each. */
  private final Map<IdempotentMethod, TransactionTemplate> templates = new ConcurrentHashMap<>();
  private volatile Idem idem;
  private volatile ObjectMapper mapper;
  private volatile Transactions transactions;
  private volatile boolean started;

  IdempotentMethodInterceptor(ListableBeanFactory beans, ObjectProvider<Idem> idems,
      ObjectProvider<ObjectMapper> mappers, ObjectProvider<PlatformTransactionManager> transactionManagers,
      ObjectProvider<IdemProperties> properties, boolean allowSeparateCommits) {
    this.allowSeparateCommits = allowSeparateCommits;
    this.beans = beans;
    this.idems = idems;
    this.mappers = mappers;
    this.transactionManagers = transactionManagers;
    this.properties = properties;
  }

  /** A method as called on beans of one class. */
  private record Target(Class<?> type, Method method) {}

  /** The JDBC store, its DataSource and the transaction manager that manages it. */
  private record Transactions(TransactionTemplate template, DataSource dataSource, JdbcIdempotencyStore store) {}

  @Override
  public void afterSingletonsInstantiated() {
    started = true;
    ObjectMapper objectMapper = mappers.getIfAvailable();
    if (objectMapper == null) {
      objectMapper = new ObjectMapper();
    }
    OperationPolicy defaults = IdemAutoConfiguration.defaults(properties.getIfAvailable(IdemProperties::new));
    List<IdempotentMethod> found = IdempotentMethods.scan(beans, defaults, new JacksonCodecs(objectMapper));
    Idem instance = idems.getIfAvailable();
    if (instance == null) {
      if (found.isEmpty()) {
        return;
      }
      throw new IllegalStateException("@Idempotent bean methods exist (" + found.get(0).source + " ...) but no Idem"
          + " could be configured: it needs one DataSource (or a @Primary one), one IdempotencyStore bean (or a"
          + " @Primary one), or an Idem bean");
    }
    for (IdempotentMethod m : found) {
      OperationPolicy registered = instance.policy(m.operation);
      if (!registered.toString().equals(m.policy.toString())) {
        LOG.log(System.Logger.Level.WARNING, "Idem '" + instance.name() + "': the Idem bean has no policy for "
            + m.operation + " as " + m.source + " declares it; the bean's policy applies: " + registered);
      }
      methods.put(new Target(m.type, m.method), m);
    }
    this.mapper = objectMapper;
    this.transactions = transactions(instance);
    this.idem = instance;
    if (found.isEmpty()) {
      return;
    }
    LOG.log(System.Logger.Level.INFO, "Idem '" + instance.name() + "': idempotent methods " + found.stream()
        .map(m -> m.source + " (" + m.operation + ", " + m.mode + ")").toList());
    List<String> atomic = found.stream().filter(m -> m.mode == IdempotentRoute.Mode.ATOMIC).map(m -> m.source)
        .toList();
    if (transactions == null && !atomic.isEmpty()) {
      String why = unsealed(instance.store()) instanceof JdbcIdempotencyStore
          ? "no single Spring transaction manager manages the idempotency store's DataSource"
          : "the idempotency store (" + instance.store().name() + ") is not the JDBC store, whose transaction a"
              + " Spring transaction can be";
      String what = "Idem '" + instance.name() + "': " + why + ", so the ATOMIC methods " + atomic + " would run in"
          + " the store's own transaction: what they write through Spring (JdbcTemplate, JPA) would commit apart from"
          + " their records, and a duplicate that loses a race would keep its writes";
      if (!allowSeparateCommits) {
        throw new IllegalStateException(what + ". Make the store the JDBC store on the DataSource that a single (or"
            + " @Primary) PlatformTransactionManager manages, make the methods mode = LEASED, or, if they write only"
            + " through the store's own connection, set " + ALLOW_SEPARATE_COMMITS + "=true");
      }
      LOG.log(System.Logger.Level.WARNING, what + " (" + ALLOW_SEPARATE_COMMITS + "=true)");
    }
  }

  private static IdempotencyStore unsealed(IdempotencyStore store) {
    return store instanceof EncryptedIdempotencyStore sealed ? sealed.unwrap() : store;
  }

  private Transactions transactions(Idem instance) {
    IdempotencyStore store = unsealed(instance.store());
    PlatformTransactionManager manager = transactionManagers.getIfUnique();
    if (!(store instanceof JdbcIdempotencyStore jdbc) || manager == null) {
      return null;
    }
    return SpringDataSourceTransactions.dataSourceOf(manager) == jdbc.dataSource()
        ? new Transactions(new TransactionTemplate(manager), jdbc.dataSource(), jdbc) : null;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Class<?> target = ClassUtils.getUserClass(invocation.getThis() == null
        ? invocation.getMethod().getDeclaringClass() : AopUtils.getTargetClass(invocation.getThis()));
    if (idem == null) {
      throw new IllegalStateException("@Idempotent method " + invocation.getMethod() + (started
          ? " has no Idem to run with: it needs one DataSource (or a @Primary one), one IdempotencyStore bean (or a"
              + " @Primary one), or an Idem bean"
          : " was called before the application finished starting; idempotent methods run once every singleton"
              + " exists"));
    }
    Method specific = AopUtils.getMostSpecificMethod(invocation.getMethod(), target);
    IdempotentMethod m = methods.get(new Target(target, specific));
    if (m == null) {
      m = unscanned(target, specific);
    }
    Object[] arguments = invocation.getArguments();
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(invocation.getThis(), m.method, arguments, NAMES);
    context.setBeanResolver(new BeanFactoryResolver(beans));
    String key = m.key(context);
    if (key == null) {
      if (m.keyRequired) {
        throw new IllegalArgumentException("@Idempotent(key = \"" + m.key.getExpressionString() + "\") of " + m.source
            + " gave no key for this call");
      }
      return invocation.proceed();
    }
    String scope = m.scope(context);
    RecordKey recordKey = new RecordKey(Scope.of(scope == null ? idem.name() : scope), m.operation,
        IdempotencyKey.of(key));
    byte[] input;
    try {
      input = ExactNumbers.of(mapper, mapper.writeValueAsBytes(m.fingerprintInput(context, arguments)));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("@Idempotent on " + m.source + ": the fingerprint's arguments cannot be"
          + " written as JSON (" + e.getMessage() + "); name what it covers with @Idempotent(fingerprint = ...)", e);
    }
    IdempotentCall call = idem.call(recordKey).fingerprintJson(input);
    int attempt = m.attempt(context);
    if (attempt > 0) {
      call = call.attempt(attempt);
    }
    try {
      if (m.mode == IdempotentRoute.Mode.LEASED) {
        IdempotentCall leased = call.keepFailures(m::keeps);
        Transactions outer = transactions;
        if (outer != null && TransactionSynchronizationManager.isActualTransactionActive()
            && !outer.store().joinsCallerTransaction()) {
          // Leased work runs outside any transaction: a caller's transaction is suspended around it, so that what
          // the method writes commits with it, not with a caller that could roll back after its record was completed
          // (the retry would replay a value whose writes are gone). Inside a transaction the store joined, the
          // executor refuses the call instead.
          TransactionTemplate outside = new TransactionTemplate(outer.template().getTransactionManager());
          outside.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
          Codec<Object> codec = m.codec;
          return outside.execute(status -> leased.leased(codec, () -> proceed(invocation)).value());
        }
        return leased.leased(m.codec, () -> proceed(invocation)).value();
      }
      Transactions tx = transactions;
      if (tx == null) {
        return call.keepFailures(m::keeps).atomic(m.codec, t -> proceed(invocation)).value();
      }
      return inSpringTransaction(tx, m, call, invocation);
    } catch (WorkFailedException e) {
      // the method's own checked exception, wrapped by the executor: the caller gets it as the method declared it
      throw e.getCause() instanceof Exception cause && !(cause instanceof RuntimeException) ? cause : e;
    }
  }

  /**
   * A method the startup scan did not see (a bean whose declared type hides it, such as a {@code @Bean} method that
   * returns an interface): read and checked at its first call. Its operation has the default policy unless the Idem
   * bean has one for it.
   */
  private IdempotentMethod unscanned(Class<?> target, Method specific) {
    return methods.computeIfAbsent(new Target(target, specific), t -> {
      Method method = t.method();
      Idempotent a = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
      if (a == null) {
        throw new IllegalStateException("no @Idempotent on " + method);
      }
      String source = IdempotentMethod.source(target, method);
      // another bean class that inherits the method has its default operation already: this one is named after its
      // own class
      boolean shared = methods.keySet().stream().anyMatch(other -> other.method().equals(method));
      Class<?> named = shared && a.operation().isBlank() ? target : method.getDeclaringClass();
      IdempotentMethod read = IdempotentMethod.of(target, method, a,
          idem.policy(IdempotentMethod.operation(source, named, method, a)), new JacksonCodecs(mapper), named);
      for (IdempotentMethod other : methods.values()) {
        if (other.operation.equals(read.operation)) {
          throw new IllegalStateException("@Idempotent method " + read.source + " has the operation "
              + read.operation + " of " + other.source + ", so a call on one would replay a call on the other with"
              + " the same key; give each its own operation");
        }
      }
      LOG.log(System.Logger.Level.WARNING, "Idem '" + idem.name() + "': @Idempotent method " + read.source
          + " was not found when the application started (its bean's declared type does not show it); it runs"
          + " with the policy of " + read.operation + " that the Idem bean has, not the annotation's");
      return read;
    });
  }

  private Object inSpringTransaction(Transactions tx, IdempotentMethod m, IdempotentCall call,
      MethodInvocation invocation) throws Throwable {
    for (int attempt = 1; ; attempt++) {
      Attempt a = attempt(tx, m, call, invocation);
      if (a.failed == null) {
        return a.value;
      }
      // a deadlock or a serialization failure rolled back a transaction of our own: run it again, as the store
      // does with its own transactions (inside the caller's transaction only the caller can)
      if (a.own && attempt < MAX_ATTEMPTS && transientStoreFailure(a.failed)) {
        continue;
      }
      Throwable failure = a.failed instanceof WorkFailedException && a.failed.getCause() != null
          ? a.failed.getCause() : a.failed;
      // Idem's own exceptions (a store failure after the method ran, say) are never the key's answer
      if (a.ran && m.keeps(failure) && !(failure instanceof IdemException)) {
        Optional<IdempotentCall.Result<Object>> earlier;
        // called from another @Idempotent method or an atomic route, the store is still bound to their transaction,
        // which this failure may roll back: the failure is kept on a connection of its own, as for any other caller
        try (JdbcIdempotencyStore.Binding own = tx.store().suspendConnection()) {
          earlier = call.keepFailure(m.codec, failure);
        } catch (RuntimeException keeping) {
          a.failed.addSuppressed(keeping);
          throw a.failed;
        }
        if (earlier.isPresent()) {
          return earlier.get().value();
        }
      }
      throw a.failed;
    }
  }

  /**
   * A deadlock or serialization failure. The store reports one inside a joined transaction as not transient (only the
   * transaction's owner may run it again), with the transient failure as its cause.
   */
  private static boolean transientStoreFailure(Throwable failed) {
    return failed instanceof StoreException e
        && (e.isTransient() || e.getCause() instanceof StoreException cause && cause.isTransient());
  }

  /** One run of a call in a Spring transaction. */
  private record Attempt(Object value, Throwable failed, boolean ran, boolean own) {}

  private Attempt attempt(Transactions tx, IdempotentMethod m, IdempotentCall call, MethodInvocation invocation) {
    boolean[] own = {false};
    boolean[] ran = {false};
    Object[] value = {null};
    Throwable[] failed = {null};
    template(tx, m).executeWithoutResult(status -> {
      own[0] = status.isNewTransaction();
      Connection c = DataSourceUtils.getConnection(tx.dataSource());
      JdbcIdempotencyStore.Binding binding = null;
      try {
        // Bound already on this thread (an outer @Idempotent method or atomic route, or code that called
        // useConnection): in the same transaction the store joins it as it is. One in another transaction
        // (REQUIRES_NEW between them) would write its record on the outer connection and its effect on its own,
        // which may then commit without the record.
        Connection outer = tx.store().boundConnection().orElse(null);
        if (outer != null && outer != c) {
          throw new IllegalStateException("@Idempotent method " + m.source + " runs in another transaction than"
              + " the one the idempotency store has joined on this thread (an @Idempotent method's or route's that"
              + " called it, with a REQUIRES_NEW transaction between them?); an idempotent method called from"
              + " another must join its transaction");
        }
        if (outer == null) {
          binding = tx.store().useConnection(c);
        }
        IdempotentCall.Result<Object> result = call.atomic(m.codec, t -> {
          ran[0] = true;
          Object returned = proceed(invocation);
          flush(status);
          return returned;
        });
        if (ran[0] && result.replayed()) {
          // lost a race to a concurrent duplicate: what this execution wrote must not commit
          status.setRollbackOnly();
        }
        value[0] = result.value();
      } catch (RuntimeException | Error e) {
        if (ran[0] || own[0]) {
          status.setRollbackOnly();
        }
        failed[0] = e;
      } finally {
        if (binding != null) {
          binding.close();
        }
        DataSourceUtils.releaseConnection(c, tx.dataSource());
      }
    });
    return new Attempt(value[0], failed[0], ran[0], own[0]);
  }

  /**
   * The transaction the interceptor starts for the method (or joins, when the caller has one): with the isolation
   * and timeout of the method's own {@code @Transactional}, which then only joins it.
   */
  private TransactionTemplate template(Transactions tx, IdempotentMethod m) {
    if (m.isolation == TransactionDefinition.ISOLATION_DEFAULT && m.timeout == TransactionDefinition.TIMEOUT_DEFAULT) {
      return tx.template();
    }
    return templates.computeIfAbsent(m, own -> {
      TransactionTemplate template = new TransactionTemplate(tx.template().getTransactionManager());
      template.setIsolationLevel(own.isolation);
      template.setTimeout(own.timeout);
      return template;
    });
  }

  /** Writes what a JPA persistence context holds, so that a lost race or a failure rolls it back with the rest. */
  private static void flush(TransactionStatus status) {
    status.flush();
  }

  /**
   * Calls the method through the rest of the advice chain (its own {@code @Transactional}, aspects ordered after this
   * interceptor, method validation); a {@link Throwable} that is neither an exception nor an error is wrapped. Each
   * try proceeds on a clone of the invocation: Spring's invocation keeps its place in the chain, so proceeding on it
   * again (a retry after a deadlock, the executor's second round) would call the bean's method directly.
   */
  private static Object proceed(MethodInvocation invocation) throws Exception {
    try {
      return invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone().proceed()
          : invocation.proceed();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }
}
