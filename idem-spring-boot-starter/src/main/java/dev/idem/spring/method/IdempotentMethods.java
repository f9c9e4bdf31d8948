package dev.idem.spring.method;

import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.spring.Idempotent;
import dev.idem.spring.internal.AnnotatedBeans;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;

/**
 * Finds the {@code @Idempotent} methods of the application's beans that are not controllers (whose methods are HTTP
 * routes), reading bean types without creating the beans. The auto-configuration registers their policies with the
 * {@code Idem} and checks them at startup.
 */
public final class IdempotentMethods {
  private static final List<String> METHOD_ONLY = List.of("key", "scope", "operation", "fingerprint",
      "keepExceptions", "attempt");

  private IdempotentMethods() {}

  /** The operation policy of every {@code @Idempotent} bean method; fails, naming the method, on a bad value. */
  public static Map<Operation, OperationPolicy> policies(ListableBeanFactory beans, OperationPolicy defaults) {
    Map<Operation, OperationPolicy> policies = new LinkedHashMap<>();
    for (IdempotentMethod m : scan(beans, defaults, null)) {
      policies.put(m.operation, m.policy);
    }
    return policies;
  }

  /**
   * Every {@code @Idempotent} bean method, checked (with the codecs of their return types when {@code codecs} is not
   * null).
   * Also fails when a controller's {@code @Idempotent} method sets an attribute that only bean methods read.
   */
  static List<IdempotentMethod> scan(ListableBeanFactory beans, OperationPolicy defaults,
      IdempotentMethod.Codecs codecs) {
    Map<String, IdempotentMethod> found = new LinkedHashMap<>();
    for (AnnotatedBeans.Found<Idempotent> bean : AnnotatedBeans.find(beans, Idempotent.class)) {
      Class<?> user = bean.type();
      Map<Method, Idempotent> methods = bean.methods();
      boolean controller = AnnotatedElementUtils.hasAnnotation(user, Controller.class);
      for (Map.Entry<Method, Idempotent> e : methods.entrySet()) {
        if (controller) {
          checkRoute(user, e.getKey(), e.getValue());
          continue;
        }
        IdempotentMethod m = IdempotentMethod.of(user, e.getKey(), e.getValue(), defaults, codecs);
        IdempotentMethod previous = found.putIfAbsent(m.operation.name(), m);
        // one method seen on two beans of its class is one declaration; overloads are two (their default operation
        // is the same Class#name, and their calls would answer each other's)
        if (previous != null && !previous.method.equals(m.method)) {
          throw new IllegalStateException("@Idempotent operation " + m.operation + " is declared twice: on "
              + previous.method.toGenericString() + " and on " + m.method.toGenericString()
              + "; give one of them its own operation");
        }
      }
    }
    return new ArrayList<>(found.values());
  }

  private static void checkRoute(Class<?> type, Method method, Idempotent a) {
    List<String> set = new ArrayList<>();
    if (!a.key().isEmpty()) {
      set.add("key");
    }
    if (!a.scope().isEmpty()) {
      set.add("scope");
    }
    if (!a.operation().isEmpty()) {
      set.add("operation");
    }
    if (!a.fingerprint().isEmpty()) {
      set.add("fingerprint");
    }
    if (a.keepExceptions().length > 0) {
      set.add("keepExceptions");
    }
    if (!a.attempt().isEmpty()) {
      set.add("attempt");
    }
    if (!set.isEmpty()) {
      throw new IllegalStateException("@Idempotent on " + IdempotentMethod.source(type, method) + " sets " + set
          + ", which only bean methods read " + METHOD_ONLY + "; on a controller the key is the Idempotency-Key"
          + " header and the scope comes from the request");
    }
  }
}
