package dev.idem.examples.payments.web;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.examples.payments.PaymentsProperties.Admission;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Registers {@link InFlightLimit} with the bound of {@code payments.admission.*}, checked against the HikariCP pool
 * when the service starts ({@link Admission#boundFor}): a bound the pool cannot serve stops the start with a message
 * naming the properties. Meters, when the application has a registry: {@code payments.requests.in_flight} (gauge),
 * {@code payments.requests.in_flight.max} (gauge, the bound) and {@code payments.requests.refused} (counter).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(Admission.class)
public class InFlightLimitConfiguration {
  private static final System.Logger LOG = System.getLogger(InFlightLimitConfiguration.class.getName());

  @Bean
  FilterRegistrationBean<InFlightLimit> inFlightLimit(Admission admission, DataSource dataSource,
      ObjectProvider<MeterRegistry> registries) throws SQLException {
    int bound;
    if (dataSource.isWrapperFor(HikariDataSource.class)) {
      int poolSize = dataSource.unwrap(HikariDataSource.class).getMaximumPoolSize();
      bound = admission.boundFor(poolSize);
      LOG.log(System.Logger.Level.INFO, "at most " + bound + " requests in flight (payments.admission.max-in-flight"
          + (admission.maxInFlight() == null ? ", derived" : "") + ") on a pool of " + poolSize + " connections ("
          + Admission.POOL_SIZE + "), " + admission.reservedConnections() + " of them kept for background work");
    } else if (admission.maxInFlight() != null) {
      bound = admission.maxInFlight();
      LOG.log(System.Logger.Level.WARNING, "the data source is not a HikariCP pool: payments.admission.max-in-flight ("
          + bound + ") cannot be checked against its size; give it at least 2 x " + bound + " + "
          + admission.reservedConnections() + " connections");
    } else {
      throw new IllegalStateException("payments.admission.max-in-flight must be set when the data source is not a"
          + " HikariCP pool (it is derived from " + Admission.POOL_SIZE + " otherwise), got a "
          + dataSource.getClass().getName());
    }
    InFlightLimit limit = new InFlightLimit(bound, admission.maxWait(), admission.retryAfter().toSeconds());
    MeterRegistry registry = registries.getIfAvailable();
    if (registry != null) {
      Gauge.builder("payments.requests.in_flight", limit, InFlightLimit::inFlight)
          .description("requests being served under payments.admission.max-in-flight").register(registry);
      Gauge.builder("payments.requests.in_flight.max", limit, InFlightLimit::bound)
          .description("payments.admission.max-in-flight: requests served at once").register(registry);
      FunctionCounter.builder("payments.requests.refused", limit, InFlightLimit::refused)
          .description("requests refused with 503 TRANSIENT.overloaded: the bound was reached").register(registry);
    }
    FilterRegistrationBean<InFlightLimit> registration = new FilterRegistrationBean<>(limit);
    registration.setName("inFlightLimit");
    registration.addUrlPatterns("/*");
    registration.setOrder(InFlightLimit.ORDER);
    return registration;
  }
}
