package dev.idem.spring.console;

import dev.idem.console.ConsoleAudit;
import dev.idem.console.ConsoleAuthorizer;
import dev.idem.console.ConsoleServlet;
import dev.idem.console.JdbcRecordSearch;
import dev.idem.console.RecordHints;
import dev.idem.console.RecordSearch;
import dev.idem.core.Idem;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxRelay;
import dev.idem.spring.boot.IdemAutoConfiguration;
import dev.idem.spring.outbox.OutboxRelayLifecycle;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * Mounts the operator console ({@link ConsoleServlet}) in servlet web applications that have
 * {@code dev.idem:idem-console} on the class path, at {@code idem.console.path} ({@code /idem/console} by default),
 * over the application's {@link Idem}: records always; the outbox's views and actions when an {@link Outbox} bean
 * exists; the charts when a {@link MeterRegistry} does. Who may use it is the {@link ConsoleAuthorizer} bean's
 * decision; without one the console refuses everyone (403, saying how to configure it). A {@link ConsoleAudit} bean
 * receives every action (default: a log line each), a {@link RecordSearch} bean replaces the key search (default: the
 * JDBC store's table), a {@link RecordHints} bean adds what the application knows to each record, and
 * {@link IdemConsoleCustomizer} beans adjust the rest. Properties:
 * {@link IdemConsoleProperties} ({@code idem.console.*}), validated at startup. Off with
 * {@code idem.console.enabled=false} or {@code idem.enabled=false}.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class, afterName = {
    "dev.idem.spring.outbox.IdemOutboxAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(ConsoleServlet.class)
@ConditionalOnProperty(prefix = "idem", name = "enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnProperty(prefix = "idem.console", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemConsoleProperties.class)
public class IdemConsoleAutoConfiguration {
  /** The bean name of the servlet registration; define a bean with this name to replace it. */
  public static final String REGISTRATION_BEAN = "idemConsole";

  /** The console, mounted at {@code idem.console.path}. */
  @Bean(name = REGISTRATION_BEAN)
  @ConditionalOnMissingBean(name = REGISTRATION_BEAN)
  @ConditionalOnBean(Idem.class)
  public ServletRegistrationBean<ConsoleServlet> idemConsole(Idem idem, IdemConsoleProperties properties,
      ObjectProvider<ConsoleAuthorizer> authorizer, ObjectProvider<ConsoleAudit> audit,
      ObjectProvider<RecordSearch> search, ObjectProvider<RecordHints> hints, ObjectProvider<IdempotencyStore> stores,
      ObjectProvider<Clock> clock, ObjectProvider<IdemConsoleCustomizer> customizers) {
    properties.validate();
    ConsoleServlet.Builder builder = ConsoleServlet.builder(idem)
        .authorizer(authorizer.getIfAvailable(ConsoleAuthorizer::refuseAll))
        .audit(audit.getIfAvailable(ConsoleAudit::logging));
    try {
      builder.allowedHosts(properties.getAllowedHosts());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("idem.console.allowed-hosts: " + e.getMessage(), e);
    }
    try {
      builder.trustedOrigins(properties.getTrustedOrigins());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("idem.console.trusted-origins: " + e.getMessage(), e);
    }
    RecordSearch chosen = search.getIfAvailable();
    if (chosen == null) {
      // the raw store (the Idem's may wrap it for encryption): its table is searched for keys, which are not sealed
      IdempotencyStore store = stores.getIfUnique();
      chosen = store instanceof JdbcIdempotencyStore jdbc ? JdbcRecordSearch.of(jdbc)
          : RecordSearch.scanning(idem.store().admin(), properties.getSearchMaxScanned());
    }
    builder.search(chosen);
    hints.ifAvailable(builder::hints);
    clock.ifAvailable(builder::clock);
    customizers.orderedStream().forEach(c -> c.customize(builder));
    ServletRegistrationBean<ConsoleServlet> registration =
        new ServletRegistrationBean<>(builder.build(), properties.getPath() + "/*");
    registration.setName(REGISTRATION_BEAN);
    return registration;
  }

  /** The outbox's views and actions, when the application has an outbox. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(Outbox.class)
  static class OutboxViews {

    @Bean
    @Order(-100)
    @ConditionalOnBean(Outbox.class)
    IdemConsoleCustomizer idemConsoleOutbox(Outbox outbox, ObjectProvider<OutboxRelayLifecycle> lifecycle,
        ObjectProvider<OutboxRelay> relay) {
      return builder -> builder.outbox(outbox, () -> {
        OutboxRelayLifecycle running = lifecycle.getIfUnique();
        if (running != null) {
          return running.relay().orElse(null);
        }
        return relay.getIfUnique();
      });
    }
  }

  /** The charts, from the application's meters. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Charts {

    @Bean
    @Order(-100)
    @ConditionalOnBean(MeterRegistry.class)
    IdemConsoleCustomizer idemConsoleCharts(MeterRegistry registry) {
      return builder -> builder.metrics(new MicrometerConsoleMetrics(registry));
    }
  }
}
