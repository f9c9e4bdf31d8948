package dev.idem.spring.listener;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * The application's beans that have {@link IdempotentListener} methods. Needs nothing of idem-outbox, so that an
 * application without it can be told its annotations would be ignored.
 */
final class ListenerBeans {
  private ListenerBeans() {}

  /** A bean, its class as written, and its {@link IdempotentListener} methods. */
  record Found(String name, Class<?> type, Map<Method, IdempotentListener> methods) {}

  /** Every bean of {@code beans} with {@link IdempotentListener} methods, without creating any bean. */
  static List<Found> of(ListableBeanFactory beans) {
    List<Found> found = new ArrayList<>();
    for (String name : beans.getBeanNamesForType(Object.class, true, false)) {
      Class<?> type = beans.getType(name, false);
      if (type == null) {
        continue;
      }
      Class<?> user = ClassUtils.getUserClass(type);
      if (user.getName().startsWith("org.springframework.")) {
        continue;
      }
      Map<Method, IdempotentListener> annotated;
      try {
        annotated = MethodIntrospector.selectMethods(user,
            (MethodIntrospector.MetadataLookup<IdempotentListener>) m -> AnnotatedElementUtils.findMergedAnnotation(
                m, IdempotentListener.class));
      } catch (LinkageError e) {
        continue; // a library bean whose methods name an optional class that is absent
      }
      if (!annotated.isEmpty()) {
        found.add(new Found(name, user, annotated));
      }
    }
    return found;
  }
}
