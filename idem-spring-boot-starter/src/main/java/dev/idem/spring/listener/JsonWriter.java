package dev.idem.spring.listener;

import java.util.function.Function;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.ObjectMapper;

/**
 * Writes the payload of a listener method without a raw message parameter (its arguments) as JSON, through the
 * application's Jackson 3 {@link ObjectMapper} (or a default one). Without Jackson, such a payload fails.
 */
final class JsonWriter {
  private static final String JACKSON = "tools.jackson.databind.ObjectMapper";

  private JsonWriter() {}

  /** Whether the application has Jackson 3, as its bean class loader sees it. */
  static boolean available(ListableBeanFactory beans) {
    ClassLoader loader = beans instanceof ConfigurableBeanFactory c ? c.getBeanClassLoader() : null;
    return ClassUtils.isPresent(JACKSON, loader == null ? JsonWriter.class.getClassLoader() : loader);
  }

  static Function<Object, byte[]> of(ListableBeanFactory beans) {
    if (!available(beans)) {
      return value -> {
        throw new IllegalStateException("the payload of a listener method without a raw message parameter is its"
            + " arguments as JSON, which needs Jackson 3 (tools.jackson.core:jackson-databind)");
      };
    }
    return Jackson.of(beans);
  }

  /** Loaded only when Jackson is present. */
  private static final class Jackson {
    static Function<Object, byte[]> of(ListableBeanFactory beans) {
      ObjectMapper mapper = beans.getBeanProvider(ObjectMapper.class).getIfUnique(ObjectMapper::new);
      return mapper::writeValueAsBytes;
    }
  }
}
