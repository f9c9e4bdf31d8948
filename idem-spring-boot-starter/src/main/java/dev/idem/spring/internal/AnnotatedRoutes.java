package dev.idem.spring.internal;

import dev.idem.core.KeepPolicy;
import dev.idem.core.OperationPolicy;
import dev.idem.core.fingerprint.FingerprintPolicy;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;

/**
 * Reads {@link Idempotent} handler methods from the controller bean types (without creating the beans) and turns
 * each into routes and an operation policy. Fails at startup, naming the method, on anything it cannot honour.
 */
public final class AnnotatedRoutes {

  /** One idempotent route and the policy of its operation. */
  public record Entry(IdempotentRoute route, OperationPolicy policy, String source) {}

  private AnnotatedRoutes() {}

  public static List<Entry> scan(ListableBeanFactory beans, OperationPolicy defaults) {
    Map<String, Entry> found = new LinkedHashMap<>();
    for (String name : beans.getBeanNamesForAnnotation(Controller.class)) {
      Class<?> type = beans.getType(name);
      if (type == null) {
        continue;
      }
      Class<?> user = ClassUtils.getUserClass(type);
      Map<Method, Idempotent> methods = MethodIntrospector.selectMethods(user,
          (MethodIntrospector.MetadataLookup<Idempotent>) m -> AnnotatedElementUtils.findMergedAnnotation(m,
              Idempotent.class));
      for (Map.Entry<Method, Idempotent> e : methods.entrySet()) {
        for (Entry entry : entries(user, e.getKey(), e.getValue(), defaults)) {
          Entry previous = found.putIfAbsent(entry.route().operation().name(), entry);
          if (previous != null && !previous.source().equals(entry.source())) {
            throw new IllegalStateException("@Idempotent operation " + entry.route().operation() + " is declared"
                + " twice: on " + previous.source() + " and on " + entry.source());
          }
        }
      }
    }
    return List.copyOf(found.values());
  }

  static List<Entry> entries(Class<?> type, Method method, Idempotent idempotent, OperationPolicy defaults) {
    String source = type.getName() + "." + method.getName();
    RequestMapping mapping = AnnotatedElementUtils.findMergedAnnotation(method, RequestMapping.class);
    if (mapping == null) {
      throw new IllegalStateException("@Idempotent on " + source + " needs a request mapping such as @PostMapping");
    }
    if (mapping.method().length == 0) {
      throw new IllegalStateException("@Idempotent on " + source + " needs an explicit HTTP method (use"
          + " @PostMapping, @PutMapping, @PatchMapping or @DeleteMapping)");
    }
    if (idempotent.mode() != IdempotentRoute.Mode.PHASED) {
      // the starter marks the method's start through a class proxy (HandlerStart); a method the proxy cannot
      // intercept would never be marked, and its answers never kept
      int modifiers = method.getModifiers();
      if (Modifier.isFinal(type.getModifiers()) || Modifier.isFinal(modifiers)
          || Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers)) {
        throw new IllegalStateException("@Idempotent on " + source + " must be on a method that is not final, private"
            + " or static, of a class that is not final: the starter notes when the method starts through a class"
            + " proxy, so that what Spring refuses before it runs is not kept");
      }
    }
    RequestMapping onType = AnnotatedElementUtils.findMergedAnnotation(type, RequestMapping.class);
    List<String> prefixes = onType == null || paths(onType).length == 0 ? List.of("") : List.of(paths(onType));
    String[] own = paths(mapping).length == 0 ? new String[] {""} : paths(mapping);
    OperationPolicy policy = policy(source, idempotent, defaults);
    List<Entry> out = new ArrayList<>();
    for (RequestMethod m : mapping.method()) {
      for (String prefix : prefixes) {
        for (String path : own) {
          String template = join(prefix, path);
          IdempotentRoute route;
          try {
            route = IdempotentRoute.of(m.name(), template, idempotent.mode());
          } catch (IllegalArgumentException bad) {
            throw new IllegalStateException("@Idempotent on " + source + ": " + bad.getMessage(), bad);
          }
          out.add(new Entry(idempotent.keyRequired() ? route : route.withKeyOptional(), policy, source));
        }
      }
    }
    return out;
  }

  private static String[] paths(RequestMapping mapping) {
    return mapping.path().length > 0 ? mapping.path() : mapping.value();
  }

  private static String join(String prefix, String path) {
    String p = prefix.isEmpty() || prefix.startsWith("/") ? prefix : "/" + prefix;
    if (p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    String q = path.isEmpty() || path.startsWith("/") ? path : "/" + path;
    String joined = p + q;
    return joined.isEmpty() ? "/" : joined;
  }

  /** The operation policy {@code a} declares, over {@code defaults}; fails naming {@code source} on a bad value. */
  public static OperationPolicy policy(String source, Idempotent a, OperationPolicy defaults) {
    OperationPolicy.Builder b = defaults.toBuilder();
    try {
      if (!a.ttl().isBlank()) {
        b.ttl(duration(source, "ttl", a.ttl()));
      }
      if (!a.retention().isBlank()) {
        b.retention(duration(source, "retention", a.retention()));
      }
      if (!a.lease().isBlank()) {
        b.lease(duration(source, "lease", a.lease()));
      }
      if (a.fingerprintInclude().length > 0 || a.fingerprintExclude().length > 0) {
        FingerprintPolicy.Builder f = FingerprintPolicy.builder();
        if (a.fingerprintInclude().length > 0) {
          f.include(a.fingerprintInclude());
        }
        if (a.fingerprintExclude().length > 0) {
          f.exclude(a.fingerprintExclude());
        }
        b.fingerprint(f.build());
      }
      if (a.keepStatuses().length > 0 || a.neverKeepStatuses().length > 0) {
        KeepPolicy.Builder k = KeepPolicy.builder();
        if (a.keepStatuses().length > 0) {
          k.keep(a.keepStatuses());
        }
        if (a.neverKeepStatuses().length > 0) {
          k.neverKeep(a.neverKeepStatuses());
        }
        b.keep(k.build());
      }
      if (!a.waitInFlight().isBlank()) {
        if (a.mode() == IdempotentRoute.Mode.ATOMIC) {
          throw new IllegalStateException("@Idempotent on " + source + ": waitInFlight applies to PHASED and LEASED"
              + " modes only; in ATOMIC mode a concurrent duplicate waits on the store's lock timeout instead."
              + " Remove waitInFlight, or choose another mode");
        }
        b.waitInFlight(duration(source, "waitInFlight", a.waitInFlight()));
      }
      if (!a.lookupFirst()) {
        b.lookupFirst(false);
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("@Idempotent on " + source + ": " + e.getMessage(), e);
    }
  }

  private static Duration duration(String source, String attribute, String value) {
    try {
      return DurationStyle.detectAndParse(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("@Idempotent(" + attribute + " = \"" + value + "\") on " + source
          + " is not a duration; use values such as \"30s\", \"24h\" or \"PT24H\"", e);
    }
  }
}
