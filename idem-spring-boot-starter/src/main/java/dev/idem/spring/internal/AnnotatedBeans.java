package dev.idem.spring.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * The application's beans whose methods carry an annotation of ours, read from bean types without creating any bean:
 * what the startup scans of {@code @Idempotent} methods and {@code @IdempotentListener} methods share. Spring's own
 * beans are skipped, and so is a library bean whose methods name an optional class that is absent (it has none of
 * our annotations).
 */
public final class AnnotatedBeans {
  private AnnotatedBeans() {}

  /** A bean, its class as written (not a proxy's), and its methods with the annotation. */
  public record Found<A extends Annotation>(String name, Class<?> type, Map<Method, A> methods) {}

  /** Every bean of {@code beans} with at least one method annotated {@code annotation} (merged), in bean order. */
  public static <A extends Annotation> List<Found<A>> find(ListableBeanFactory beans, Class<A> annotation) {
    List<Found<A>> found = new ArrayList<>();
    for (String name : beans.getBeanNamesForType(Object.class, true, false)) {
      Class<?> type = beans.getType(name, false);
      if (type == null) {
        continue;
      }
      Class<?> user = ClassUtils.getUserClass(type);
      if (user.getName().startsWith("org.springframework.")) {
        continue;
      }
      Map<Method, A> annotated;
      try {
        annotated = MethodIntrospector.selectMethods(user,
            (MethodIntrospector.MetadataLookup<A>) m -> AnnotatedElementUtils.findMergedAnnotation(m, annotation));
      } catch (LinkageError e) {
        continue;
      }
      if (!annotated.isEmpty()) {
        found.add(new Found<>(name, user, annotated));
      }
    }
    return found;
  }
}
