package dev.idem.spring.events;

import java.util.SortedSet;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * Fails the start of an application with events to write to the outbox ({@link Externalized} classes in its packages,
 * or {@code idem.events.routes}) when dev.idem:idem-outbox is not on the classpath: {@link IdemEventsAutoConfiguration}
 * then does not apply, and the events would be published to Spring only, written nowhere, with nothing thrown. Off
 * with {@code idem.events.enabled=false}.
 */
@AutoConfiguration
@ConditionalOnMissingClass("dev.idem.outbox.events.Events")
@ConditionalOnProperty(prefix = "idem.events", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemEventsProperties.class)
public class IdemEventsCheckAutoConfiguration {

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static SmartInitializingSingleton idemEventsWithoutOutboxCheck(ListableBeanFactory beans, Environment environment) {
    return () -> {
      IdemEventsProperties properties = beans.getBean(IdemEventsProperties.class);
      SortedSet<String> events = ExternalizedScan.eventsToWrite(properties, beans, environment);
      if (!events.isEmpty()) {
        throw new IllegalStateException("events of " + events + " (@Externalized, or in idem.events.routes) are to"
            + " be written to the outbox, but dev.idem:idem-outbox is not on the classpath, so they would be"
            + " published to Spring only, written nowhere, and nothing would throw: add dev.idem:idem-outbox, or set"
            + " idem.events.enabled=false");
      }
    };
  }
}
