package dev.idem.spring.method;

import dev.idem.core.Codec;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import dev.idem.spring.internal.AnnotatedRoutes;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttributeSource;

/** One {@code @Idempotent} bean method, read and checked once: its operation, expressions, policy and codec. */
final class IdempotentMethod {
  private static final TransactionAttributeSource TRANSACTIONS = new AnnotationTransactionAttributeSource(false);
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  /** The bean class whose calls this is (the method may be inherited from one of its superclasses). */
  final Class<?> type;
  final Method method;
  final String source;
  final Operation operation;
  final OperationPolicy policy;
  final IdempotentRoute.Mode mode;
  final boolean keyRequired;
  final Expression key;
  final Expression scope;
  final Expression fingerprint;
  final Expression attempt;
  final List<Class<? extends Throwable>> keep;
  final String[] parameterNames;
  /**
   * The parameter the attempt expression names alone ({@code "#attempt"}, {@code "#p1"} or {@code "#a1"}), left out
   * of the fingerprint; or -1.
   */
  private final int attemptParameter;
  final Codec<Object> codec;
  /**
   * The isolation and timeout of the method's own {@code @Transactional}, which the transaction the interceptor
   * starts for it takes (the method's then only joins it); Spring's defaults when it has none.
   */
  final int isolation;
  final int timeout;

  private IdempotentMethod(Class<?> type, Method method, String source, Operation operation, Idempotent a,
      OperationPolicy policy, Codec<Object> codec) {
    this.type = type;
    this.method = method;
    this.source = source;
    this.operation = operation;
    this.policy = policy;
    this.mode = a.mode();
    this.keyRequired = a.keyRequired();
    this.key = parse(source, "key", a.key());
    this.scope = a.scope().isBlank() ? null : parse(source, "scope", a.scope());
    this.fingerprint = a.fingerprint().isBlank() ? null : parse(source, "fingerprint", a.fingerprint());
    this.attempt = a.attempt().isBlank() ? null : parse(source, "attempt", a.attempt());
    this.keep = List.of(a.keepExceptions());
    String[] names = NAMES.getParameterNames(method);
    this.parameterNames = new String[method.getParameterCount()];
    for (int i = 0; i < parameterNames.length; i++) {
      parameterNames[i] = names != null && names.length == parameterNames.length ? names[i] : "p" + i;
    }
    if (fingerprint == null) {
      checkPointers(source, a, parameterNames, names != null && names.length == parameterNames.length);
    }
    this.attemptParameter = attempt == null ? -1 : attemptParameter(a.attempt().trim(), parameterNames);
    this.codec = codec;
    TransactionAttribute tx = TRANSACTIONS.getTransactionAttribute(method, type);
    this.isolation = tx == null ? TransactionDefinition.ISOLATION_DEFAULT : tx.getIsolationLevel();
    this.timeout = tx == null ? TransactionDefinition.TIMEOUT_DEFAULT : tx.getTimeout();
  }

  /**
   * The parameter an attempt expression names alone: by its name ({@code "#attempt"}) or by position, as SpEL over a
   * method's arguments also reads {@code "#p1"} and {@code "#a1"}; or -1.
   */
  static int attemptParameter(String expression, String[] parameterNames) {
    if (!expression.startsWith("#")) {
      return -1;
    }
    String name = expression.substring(1);
    int named = List.of(parameterNames).indexOf(name);
    if (named >= 0) {
      return named;
    }
    if (name.matches("[pa][0-9]{1,9}")) {
      int position = Integer.parseInt(name.substring(1));
      return position < parameterNames.length ? position : -1;
    }
    return -1;
  }

  /** The name a message gives the method: {@code com.acme.Orders.place}. */
  static String source(Class<?> type, Method method) {
    return type.getName() + "." + method.getName();
  }

  /** Makes (and checks) the codec of a method's return values. */
  @FunctionalInterface
  interface Codecs {
    /** The codec for {@code method}'s generic return type, or an {@link IllegalStateException} naming it. */
    Codec<Object> codec(String source, Method method);
  }

  /**
   * Reads and checks {@code method} of {@code type}: everything the interceptor needs, or an
   * {@link IllegalStateException} naming the method. {@code codecs} null makes no codec (policies only). Without an
   * explicit operation, the operation is named after {@code named}: the method's declaring class, or the bean's own
   * class when beans of several classes inherit the method.
   */
  static IdempotentMethod of(Class<?> type, Method method, Idempotent a, OperationPolicy defaults, Codecs codecs,
      Class<?> named) {
    String source = source(type, method);
    Operation operation = operation(source, named, method, a);
    checkInterceptable(type, method, source);
    if (a.mode() == IdempotentRoute.Mode.PHASED) {
      throw new IllegalStateException("@Idempotent(mode = PHASED) on " + source + ": phased mode is for HTTP routes"
          + " with a PhasedOperation bean; a bean method runs ATOMIC or LEASED");
    }
    if (a.keepStatuses().length > 0 || a.neverKeepStatuses().length > 0) {
      throw new IllegalStateException("@Idempotent on " + source + ": keepStatuses and neverKeepStatuses apply to"
          + " HTTP routes; on a bean method, name the exceptions to keep with keepExceptions");
    }
    if (a.key().isBlank()) {
      throw new IllegalStateException("@Idempotent on " + source + " needs a key: a SpEL expression over the"
          + " arguments, such as @Idempotent(key = \"#order.id\") or key = \"#p0\"");
    }
    if (a.mode() == IdempotentRoute.Mode.ATOMIC) {
      checkJoinsTheRecordsTransaction(type, method, source);
    }
    OperationPolicy policy = policy(source, a, defaults);
    Codec<Object> codec = codecs == null ? null : codecs.codec(source, method);
    return new IdempotentMethod(type, method, source, operation, a, policy, codec);
  }

  /** The policy the annotation declares; the fingerprint pointers apply to the fingerprint's JSON. */
  static OperationPolicy policy(String source, Idempotent a, OperationPolicy defaults) {
    return AnnotatedRoutes.policy(source, a, defaults);
  }

  /** The explicit operation, or {@code <named>#<method>}. */
  static Operation operation(String source, Class<?> named, Method method, Idempotent a) {
    String name = a.operation().isBlank() ? named.getName() + "#" + method.getName()
        : a.operation().trim();
    try {
      return Operation.of(name);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("@Idempotent(operation = \"" + a.operation() + "\") on " + source + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * An ATOMIC method's writes must commit with its record: its own {@code @Transactional} may join the transaction
   * the record is written in, not suspend it or run on another transaction manager.
   */
  private static void checkJoinsTheRecordsTransaction(Class<?> type, Method method, String source) {
    TransactionAttribute tx = TRANSACTIONS.getTransactionAttribute(method, type);
    if (tx == null) {
      return;
    }
    int propagation = tx.getPropagationBehavior();
    if (propagation == TransactionDefinition.PROPAGATION_REQUIRES_NEW
        || propagation == TransactionDefinition.PROPAGATION_NOT_SUPPORTED
        || propagation == TransactionDefinition.PROPAGATION_NEVER) {
      throw new IllegalStateException("@Idempotent on " + source + " is also @Transactional with a propagation that"
          + " leaves the transaction its record is written in (REQUIRES_NEW, NOT_SUPPORTED or NEVER): its writes"
          + " would commit apart from the record, and a duplicate could apply them twice. Use REQUIRED (the"
          + " default), or mode = LEASED");
    }
    if (tx.isReadOnly()) {
      throw new IllegalStateException("@Idempotent on " + source + " is @Transactional(readOnly = true): its record is"
          + " written in the transaction the method joins, which cannot be read-only. Drop readOnly, or use"
          + " mode = LEASED");
    }
    if (tx.getQualifier() != null && !tx.getQualifier().isEmpty()) {
      throw new IllegalStateException("@Idempotent on " + source + " is @Transactional(\"" + tx.getQualifier()
          + "\"): the record is written in the transaction of the idempotency store's DataSource, and writes under"
          + " another transaction manager would commit apart from it. Drop the qualifier, or use mode = LEASED");
    }
  }

  private static void checkInterceptable(Class<?> type, Method method, String source) {
    int modifiers = method.getModifiers();
    if (Modifier.isFinal(type.getModifiers()) || Modifier.isFinal(modifiers) || Modifier.isPrivate(modifiers)
        || Modifier.isStatic(modifiers)) {
      throw new IllegalStateException("@Idempotent on " + source + " must be on a method that is not final, private"
          + " or static, of a class that is not final: Spring calls it through a proxy, which cannot intercept such"
          + " a method, so the call would not be idempotent");
    }
  }

  /**
   * The default fingerprint is an object of the arguments by parameter name: a pointer must start at one of them, or
   * it selects nothing and mismatch detection is silently off. When the names are not known ({@code known} false),
   * the arguments go by {@code p0}, {@code p1}, ..., and so must the pointers.
   */
  static void checkPointers(String source, Idempotent a, String[] names, boolean known) {
    List<Map.Entry<String, String[]>> attributes = List.of(Map.entry("fingerprintInclude", a.fingerprintInclude()),
        Map.entry("fingerprintExclude", a.fingerprintExclude()));
    for (Map.Entry<String, String[]> attribute : attributes) {
      for (String pointer : attribute.getValue()) {
        if (pointer.isEmpty()) {
          continue; // the whole document
        }
        String named = "@Idempotent(" + attribute.getKey() + " = \"" + pointer + "\") on " + source;
        int end = pointer.indexOf('/', 1);
        String first = (end < 0 ? pointer.substring(1) : pointer.substring(1, end)).replace("~1", "/")
            .replace("~0", "~");
        if (!pointer.startsWith("/") || !List.of(names).contains(first)) {
          throw new IllegalStateException(named + " names no parameter of the method, so it would select nothing:"
              + " the fingerprint is an object of the arguments by parameter name " + List.of(names) + ", and a"
              + " pointer starts with one of them" + (names.length == 0 ? "" : " (such as \"/" + names[0]
              + "/amount\")") + (known ? "" : "; the parameter names are not known (the class was compiled without"
              + " -parameters), so the arguments go by position"));
        }
      }
    }
  }

  private static Expression parse(String source, String attribute, String expression) {
    try {
      return PARSER.parseExpression(expression);
    } catch (ParseException e) {
      throw new IllegalStateException("@Idempotent(" + attribute + " = \"" + expression + "\") on " + source
          + " is not a valid SpEL expression: " + e.getMessage(), e);
    }
  }

  /** The key's text for these arguments, or null when the expression gives null or blank. */
  String key(EvaluationContext context) {
    Object value = evaluate(key, "key", context);
    String text = value == null ? null : value.toString();
    return text == null || text.isBlank() ? null : text;
  }

  /** The scope for these arguments, or null when the method has no scope expression. */
  String scope(EvaluationContext context) {
    if (scope == null) {
      return null;
    }
    Object value = evaluate(scope, "scope", context);
    if (value == null || value.toString().isBlank()) {
      throw new IllegalArgumentException("@Idempotent(scope = \"" + scope.getExpressionString() + "\") of " + source
          + " gave no scope for this call; keys never run without one");
    }
    return value.toString();
  }

  /** The caller's attempt number for these arguments, or 0 when the method has no attempt expression. */
  int attempt(EvaluationContext context) {
    if (attempt == null) {
      return 0;
    }
    Object value = evaluate(attempt, "attempt", context);
    long n;
    if (value instanceof Number number && (number instanceof Integer || number instanceof Long
        || number instanceof Short || number instanceof Byte)) {
      n = number.longValue();
    } else {
      try {
        n = value == null ? 0 : Long.parseLong(value.toString().trim());
      } catch (NumberFormatException e) {
        n = 0;
      }
    }
    if (n < 1 || n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("@Idempotent(attempt = \"" + attempt.getExpressionString() + "\") of "
          + source + " gave " + value + " for this call, not a whole number of at least 1");
    }
    return (int) n;
  }

  /**
   * What the fingerprint covers for these arguments: the expression's value, or every argument by name except the
   * one the attempt expression names alone ({@code attempt = "#attempt"}).
   */
  Object fingerprintInput(EvaluationContext context, Object[] arguments) {
    if (fingerprint != null) {
      return evaluate(fingerprint, "fingerprint", context);
    }
    Map<String, Object> all = new LinkedHashMap<>();
    for (int i = 0; i < arguments.length; i++) {
      if (i == attemptParameter) {
        continue; // the attempt number differs between attempts of one request: it is no part of the request
      }
      Object argument = arguments[i];
      all.put(parameterNames[i], argument instanceof Optional<?> o ? o.orElse(null) : argument);
    }
    return all;
  }

  private Object evaluate(Expression expression, String attribute, EvaluationContext context) {
    try {
      return expression.getValue(context);
    } catch (EvaluationException e) {
      throw new IllegalArgumentException("@Idempotent(" + attribute + " = \"" + expression.getExpressionString()
          + "\") of " + source + " cannot be evaluated for this call: " + e.getMessage(), e);
    }
  }

  /** Whether {@code failure} is one of the exceptions the method keeps. */
  boolean keeps(Throwable failure) {
    for (Class<? extends Throwable> type : keep) {
      if (type.isInstance(failure)) {
        return true;
      }
    }
    return false;
  }
}
