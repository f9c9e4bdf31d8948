package dev.idem.examples.payments.web;

import dev.idem.examples.payments.PaymentsProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.catalina.Container;
import org.apache.catalina.Context;
import org.apache.catalina.Lifecycle;
import org.apache.catalina.Pipeline;
import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The service's defences at the edge of HTTP: {@link RequestBodyGuard} before every other filter, with
 * {@link RefusedBodyValve} so that a refused body is not drained, and Tomcat's error report as a problem document
 * ({@link ProblemErrorReportValve}).
 */
@Configuration(proxyBeanMethods = false)
public class WebConfiguration {

  /** The body guard, on every route, configured by {@code payments.http.*}. */
  @Bean
  FilterRegistrationBean<RequestBodyGuard> requestBodyGuard(PaymentsProperties properties, MeterRegistry registry) {
    PaymentsProperties.Http http = properties.http();
    FilterRegistrationBean<RequestBodyGuard> registration = new FilterRegistrationBean<>(
        new RequestBodyGuard(http.maxBodyReaders(), http.bodyTimeout(), http.bodyGrace(),
            http.maxBodyBytes(), registry));
    registration.setOrder(RequestBodyGuard.ORDER);
    registration.addUrlPatterns("/*");
    return registration;
  }

  /**
   * Puts {@link ProblemErrorReportValve} on the host in place of every other error report valve, once every
   * customizer (Spring Boot's adds its own valve) has run: just before the host starts.
   */
  @Bean
  WebServerFactoryCustomizer<TomcatServletWebServerFactory> tomcatValves() {
    return factory -> {
      factory.addContextValves(new RefusedBodyValve());
      factory.addContextCustomizers(WebConfiguration::problemErrorReports);
    };
  }

  private static void problemErrorReports(Context context) {
    Container host = context.getParent();
    if (host instanceof StandardHost) {
      ((StandardHost) host).setErrorReportValveClass(ProblemErrorReportValve.class.getName());
    }
    host.addLifecycleListener(event -> {
      if (Lifecycle.BEFORE_START_EVENT.equals(event.getType())) {
        Pipeline pipeline = host.getPipeline();
        for (Valve valve : pipeline.getValves()) {
          if (valve instanceof ErrorReportValve) {
            pipeline.removeValve(valve);
          }
        }
        pipeline.addValve(new ProblemErrorReportValve());
      }
    });
  }
}
