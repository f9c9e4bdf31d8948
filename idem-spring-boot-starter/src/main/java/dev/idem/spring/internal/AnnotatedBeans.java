package dev.idem.spring.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.SingletonBeanRegistry;
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
      Class<?> user = userClass(beans, name, type);
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

  /**
   * The class a bean's methods are written in. A created bean behind a JDK proxy ({@code proxyTargetClass = false})
   * has a class that shows only its interfaces, whose methods carry no annotation of the implementation's: its
   * target's class is read instead.
   */
  private static Class<?> userClass(ListableBeanFactory beans, String name, Class<?> type) {
    if (Proxy.isProxyClass(type) && beans instanceof SingletonBeanRegistry singletons
        && singletons.containsSingleton(name)) {
      Object bean = singletons.getSingleton(name);
      if (bean != null && !(bean instanceof FactoryBean)) {
        return ClassUtils.getUserClass(AopProxyUtils.ultimateTargetClass(bean));
      }
    }
    return ClassUtils.getUserClass(type);
  }
}
