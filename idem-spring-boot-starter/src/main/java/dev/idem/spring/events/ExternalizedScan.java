package dev.idem.spring.events;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfigurationPackages;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.env.Environment;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;

/**
 * The {@link Externalized} classes under the application's auto-configuration packages. Refers to nothing of
 * idem-outbox, so the check that runs without it can use it too.
 */
final class ExternalizedScan {
  private ExternalizedScan() {}

  /** The names of the {@link Externalized} classes, read from the class files without loading them. */
  static List<String> names(BeanFactory beanFactory, Environment environment) {
    List<String> found = new ArrayList<>();
    if (!AutoConfigurationPackages.has(beanFactory)) {
      return found;
    }
    ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false,
        environment);
    scanner.addIncludeFilter(new AnnotationTypeFilter(Externalized.class, true, true));
    for (String pkg : AutoConfigurationPackages.get(beanFactory)) {
      for (BeanDefinition candidate : scanner.findCandidateComponents(pkg)) {
        found.add(candidate.getBeanClassName());
      }
    }
    return found;
  }

  /**
   * The names of the events the application has to write to the outbox: the classes of {@code idem.events.routes},
   * and the {@link Externalized} classes the scan finds when it is on. Sorted; empty when there are none.
   */
  static SortedSet<String> eventsToWrite(IdemEventsProperties properties, BeanFactory beanFactory,
      Environment environment) {
    TreeSet<String> events = new TreeSet<>();
    if (properties.getRoutes() != null) {
      events.addAll(properties.getRoutes().keySet());
    }
    if (properties.isScan()) {
      events.addAll(names(beanFactory, environment));
    }
    return events;
  }

  /** The {@link Externalized} classes, loaded with {@code loader}. */
  static List<Class<?>> classes(BeanFactory beanFactory, Environment environment, ClassLoader loader) {
    List<Class<?>> found = new ArrayList<>();
    for (String name : names(beanFactory, environment)) {
      found.add(ClassUtils.resolveClassName(name, loader));
    }
    return found;
  }
}
