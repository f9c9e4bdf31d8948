package dev.idem.spring.logging;

import dev.idem.core.Idem;
import dev.idem.core.LoggingListener;
import dev.idem.spring.boot.IdemAutoConfiguration;
import dev.idem.spring.boot.IdemProperties;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Idem's logs (docs/architecture.md, "Observability"):
 *
 * <ul>
 *   <li>the executor's and the completer's lines: a {@link Slf4jIdemListener} when SLF4J is present, else core's
 *       {@link LoggingListener} ({@code System.Logger}), both on logger {@code dev.idem}; the {@code Idem} bean
 *       receives it with its other listeners. Off with {@code idem.logging.enabled=false}; an application's own
 *       {@link LoggingListener} or {@link Slf4jIdemListener} bean replaces it;
 *   <li>in servlet web applications with SLF4J, the {@link IdemMdcFilter}, registered with
 *       {@code idem.logging.mdc.order}: unset, among the first filters, before authentication, and always before the
 *       idempotency filter ({@link IdemProperties.Mdc#effectiveOrder(int)}); set, it must be lower than
 *       {@code idem.filter.order}, else startup fails naming both. Off with {@code idem.logging.mdc.enabled=false}.
 * </ul>
 *
 * Off with the rest of Idem ({@code idem.enabled=false}).
 */
@AutoConfiguration(before = IdemAutoConfiguration.class)
@ConditionalOnClass(Idem.class)
@ConditionalOnBooleanProperty(name = "idem.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdemProperties.class)
public class IdemLoggingAutoConfiguration {

  /** The SLF4J listener. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.slf4j.MDC")
  @ConditionalOnBooleanProperty(name = "idem.logging.enabled", matchIfMissing = true)
  static class Slf4j {

    @Bean
    @ConditionalOnMissingBean({Slf4jIdemListener.class, LoggingListener.class})
    Slf4jIdemListener idemSlf4jListener() {
      return new Slf4jIdemListener();
    }
  }

  /** Core's listener, when SLF4J is absent. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass("org.slf4j.MDC")
  @ConditionalOnBooleanProperty(name = "idem.logging.enabled", matchIfMissing = true)
  static class SystemLogger {

    @Bean
    @ConditionalOnMissingBean(LoggingListener.class)
    LoggingListener idemLoggingListener() {
      return new LoggingListener();
    }
  }

  /** The MDC filter. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.slf4j.MDC", "jakarta.servlet.Filter"})
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnBooleanProperty(name = "idem.logging.mdc.enabled", matchIfMissing = true)
  static class Mdc {

    @Bean
    FilterRegistrationBean<IdemMdcFilter> idemMdcFilter(IdemProperties properties) {
      properties.validate();
      int idempotencyOrder = properties.getFilter().getOrder();
      IdemProperties.Mdc mdc = properties.getLogging().getMdc();
      mdc.validate(idempotencyOrder);
      FilterRegistrationBean<IdemMdcFilter> registration = new FilterRegistrationBean<>(new IdemMdcFilter());
      registration.setName("idemMdcFilter");
      registration.setOrder(mdc.effectiveOrder(idempotencyOrder));
      registration.setDispatcherTypes(DispatcherType.REQUEST);
      registration.addUrlPatterns("/*");
      return registration;
    }
  }
}
