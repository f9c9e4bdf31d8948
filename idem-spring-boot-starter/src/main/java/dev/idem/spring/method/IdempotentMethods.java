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
    // each annotated method, with the bean classes that have it and the beans of each class
    Map<Method, Map<Class<?>, List<String>>> holders = new LinkedHashMap<>();
    Map<Method, Idempotent> annotations = new LinkedHashMap<>();
    for (AnnotatedBeans.Found<Idempotent> bean : AnnotatedBeans.find(beans, Idempotent.class)) {
      Class<?> user = bean.type();
      boolean controller = AnnotatedElementUtils.hasAnnotation(user, Controller.class);
      for (Map.Entry<Method, Idempotent> e : bean.methods().entrySet()) {
        if (controller) {
          checkRoute(user, e.getKey(), e.getValue());
          continue;
        }
        annotations.put(e.getKey(), e.getValue());
        holders.computeIfAbsent(e.getKey(), k -> new LinkedHashMap<>())
            .computeIfAbsent(user, k -> new ArrayList<>()).add(bean.name());
      }
    }
    Map<String, IdempotentMethod> found = new LinkedHashMap<>();
    for (Map.Entry<Method, Map<Class<?>, List<String>>> h : holders.entrySet()) {
      Method method = h.getKey();
      Idempotent a = annotations.get(method);
      Map<Class<?>, List<String>> classes = h.getValue();
      checkOneCallerPerOperation(method, a, classes);
      for (Class<?> user : classes.keySet()) {
        // the method's own class names the operation, as it always has; beans of several classes that inherit it
        // each get their own, named after their class, so that their calls never answer each other's
        Class<?> named = classes.size() > 1 ? user : method.getDeclaringClass();
        IdempotentMethod m = IdempotentMethod.of(user, method, a, defaults, codecs, named);
        IdempotentMethod previous = found.putIfAbsent(m.operation.name(), m);
        // overloads are two declarations (their default operation is the same Class#name, and their calls would
        // answer each other's)
        if (previous != null) {
          throw new IllegalStateException("@Idempotent operation " + m.operation + " is declared twice: on "
              + previous.method.toGenericString() + " and on " + m.method.toGenericString()
              + "; give one of them its own operation");
        }
      }
    }
    return new ArrayList<>(found.values());
  }

  /**
   * Fails when beans would share one operation and scope, so that one's calls would replay the other's results:
   * two beans of one class, or beans of several classes inheriting a method with an explicit operation.
   */
  private static void checkOneCallerPerOperation(Method method, Idempotent a, Map<Class<?>, List<String>> classes) {
    List<String> all = classes.values().stream().flatMap(List::stream).toList();
    boolean sameClass = classes.values().stream().anyMatch(names -> names.size() > 1);
    boolean explicit = classes.size() > 1 && !a.operation().isBlank();
    if (sameClass || explicit) {
      throw new IllegalStateException("@Idempotent method " + method.toGenericString() + " is called on the beans "
          + all + (sameClass ? ", which are of one class," : "") + " with one operation ("
          + (explicit ? a.operation().trim() : "the default") + ") and one scope: a call on one would replay the"
          + " result of a call on another with the same key, and never run. Give each bean its own operation (a"
          + " subclass per bean that overrides the method with @Idempotent(operation = \"...\"), distinct for each),"
          + " or keep one bean");
    }
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
