package dev.idem.examples.payments;

import dev.idem.core.PhasedOperation;
import dev.idem.examples.payments.auth.AdminAccess;
import dev.idem.examples.payments.auth.ApiKeyAuthentication;
import dev.idem.examples.payments.auth.ApiKeys;
import dev.idem.examples.payments.ledger.Ledger;
import dev.idem.examples.payments.outbox.TenantEvents;
import dev.idem.examples.payments.payment.PaymentPhases;
import dev.idem.examples.payments.payment.Payments;
import dev.idem.examples.payments.provider.FaultInjection;
import dev.idem.examples.payments.provider.PaymentProvider;
import dev.idem.examples.payments.provider.ProviderClient;
import dev.idem.examples.payments.provider.ProviderFaults;
import dev.idem.examples.payments.provider.ProviderWebhooks;
import dev.idem.examples.payments.refund.RefundPhases;
import dev.idem.examples.payments.refund.Refunds;
import dev.idem.examples.payments.web.Json;
import dev.idem.retry.Backoff;
import dev.idem.retry.CircuitBreaker;
import dev.idem.retry.Jitter;
import dev.idem.retry.spi.RetryListener;
import dev.idem.spring.retry.RetryMeters;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.Random;
import java.util.random.RandomGenerator;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * The service's wiring: the schema, the simulated provider and the {@link ProviderClient} that retries its outages
 * (retry {@code provider}, optionally behind a circuit breaker, both reported to the starter's
 * {@link RetryMeters}), the two phased operations (registered with Idem by the starter, which collects every
 * {@link PhasedOperation} bean) and the authentication filter, which runs before the starter's idempotency filter so
 * that the tenant is the request's principal, and so its scope. The outbox, the inbox and the relay are wired in
 * {@link dev.idem.examples.payments.outbox.OutboxConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(PaymentsProperties.class)
public class PaymentsConfiguration {
  /** The authentication filter's order: before the idempotency filter (order 0). */
  public static final int AUTHENTICATION_ORDER = -100;

  @Bean
  Clock clock() {
    return Clock.systemUTC();
  }

  @Bean
  PaymentsSchema paymentsSchema(DataSource dataSource) {
    return PaymentsSchema.createIfMissing(dataSource);
  }

  /** The provider's randomness: seeded by {@code payments.provider.seed} when set. */
  @Bean
  RandomGenerator providerRandom(PaymentsProperties properties) {
    Long seed = properties.provider().seed();
    return seed == null ? new Random() : new Random(seed);
  }

  @Bean
  PaymentProvider paymentProvider(DataSource dataSource, PaymentsSchema schema, PaymentsProperties properties,
      RandomGenerator providerRandom, Clock clock, ProviderWebhooks webhooks) {
    PaymentsProperties.Provider p = properties.provider();
    FaultInjection faults = new FaultInjection(
        new ProviderFaults(p.timeoutAfterCommitRate(), p.errorRate(), p.latencyMs(), p.refusalRate()), providerRandom);
    return new PaymentProvider(dataSource, faults, clock, webhooks);
  }

  /**
   * The provider's calls: retry {@code provider} per {@code payments.provider.retry.*}, and a circuit breaker of the
   * same name when {@code payments.provider.circuit-breaker.enabled=true}. The jitter draws from a randomness of its
   * own (seeded from {@code payments.provider.seed} when set), so that retries never shift which calls the fault
   * injection fails. Meters, when the application has a registry: {@code idem.retry.*} and {@code idem.circuit.state}.
   */
  @Bean
  ProviderClient providerClient(PaymentProvider provider, PaymentsProperties properties, Clock clock,
      ObjectProvider<RetryMeters> meters) {
    PaymentsProperties.Provider p = properties.provider();
    PaymentsProperties.Provider.RetrySettings retry = p.retry();
    PaymentsProperties.Provider.CircuitBreakerSettings settings = p.circuitBreaker();
    RetryMeters retryMeters = meters.getIfAvailable();
    CircuitBreaker breaker = null;
    if (settings.enabled()) {
      breaker = CircuitBreaker.builder().name(ProviderClient.NAME).countWindow(settings.windowSize())
          .minimumCalls(settings.minimumCalls()).failureRateThreshold(settings.failureRateThreshold())
          .openDuration(settings.openDuration(), 2.0, settings.openDuration().multipliedBy(10))
          .halfOpenProbes(settings.halfOpenProbes()).clock(clock).build();
      if (retryMeters != null) {
        retryMeters.bind(breaker);
      }
    }
    Backoff backoff = Backoff.exponential(retry.backoffInitial(), retry.backoffMax(), Jitter.DECORRELATED);
    RandomGenerator jitter = p.seed() == null ? null : new Random(p.seed() ^ 0x2545F4914F6CDD1DL);
    return new ProviderClient(provider, retry.maxAttempts(), backoff, breaker,
        retryMeters != null ? retryMeters : RetryListener.NO_OP, clock, jitter);
  }

  @Bean
  PaymentPhases paymentPhases(Payments payments, Ledger ledger, ProviderClient provider, TenantEvents events,
      Json json, Clock clock, DataSource dataSource) {
    return new PaymentPhases(payments, ledger, provider, events, json, clock, dataSource);
  }

  @Bean
  PhasedOperation postPayments(PaymentPhases phases) {
    return phases.operation();
  }

  @Bean
  RefundPhases refundPhases(Payments payments, Refunds refunds, Ledger ledger, ProviderClient provider,
      TenantEvents events, Json json, Clock clock, DataSource dataSource) {
    return new RefundPhases(payments, refunds, ledger, provider, events, json, clock, dataSource);
  }

  @Bean
  PhasedOperation postRefunds(RefundPhases phases) {
    return phases.operation();
  }

  /** The admin key of {@code application.properties}, for local development only. */
  static final String DEFAULT_ADMIN_KEY = "sk_admin";

  /**
   * Refuses to start with the documented default admin key unless the service listens on a loopback address only:
   * anyone who can reach the port would otherwise hold the admin routes and the console.
   *
   * @param adminKey {@code payments.admin-key}
   * @param address {@code server.address}; null or blank means every interface
   * @throws IllegalStateException when the key is the default and the address is not loopback (on loopback it is
   *     logged as a warning)
   */
  static void refuseDefaultAdminKeyOffLoopback(String adminKey, String address) {
    if (!DEFAULT_ADMIN_KEY.equals(adminKey)) {
      return;
    }
    boolean loopback;
    try {
      loopback = address != null && !address.isBlank() && InetAddress.getByName(address.strip()).isLoopbackAddress();
    } catch (UnknownHostException e) {
      loopback = false;
    }
    if (!loopback) {
      throw new IllegalStateException("payments.admin-key is the documented default (" + DEFAULT_ADMIN_KEY + ") and"
          + " the service would listen on " + (address == null || address.isBlank() ? "every interface" : address)
          + ": whoever reaches the port would hold the admin routes and the console. Set payments.admin-key"
          + " (environment PAYMENTS_ADMIN_KEY) to a secret of your own, or listen on loopback only"
          + " (server.address=127.0.0.1)");
    }
    System.getLogger(PaymentsConfiguration.class.getName()).log(System.Logger.Level.WARNING,
        "payments.admin-key is the documented default: whoever can reach " + address.strip() + " can use the admin"
            + " routes and the operator console with it; set a secret of your own before listening elsewhere");
  }

  /**
   * Refuses to start with the admin routes' loopback exemption on while forwarded headers are applied to requests
   * ({@code server.forward-headers-strategy} {@code framework} or {@code native}, or unset on a cloud platform whose
   * proxy Spring Boot trusts by itself, such as Kubernetes): the client's address and host would then come from
   * {@code X-Forwarded-For}, {@code X-Forwarded-Host} or {@code Forwarded}, which a client can write, so
   * {@code X-Forwarded-For: 127.0.0.1} would make any caller a loopback caller.
   *
   * @param allowLoopback {@code payments.admin-allow-loopback}
   * @param environment where {@code server.forward-headers-strategy} and the cloud platform are read
   * @throws IllegalStateException when both are in effect
   */
  static void refuseLoopbackExemptionWithForwardedHeaders(boolean allowLoopback, ConfigurableEnvironment environment) {
    if (!allowLoopback) {
      return;
    }
    String strategy = Binder.get(environment).bind("server.forward-headers-strategy", String.class)
        .map(s -> s.strip().toLowerCase(java.util.Locale.ROOT).replace("_", "").replace("-", "")).orElse(null);
    String applied;
    if (strategy == null) {
      CloudPlatform platform = CloudPlatform.getActive(environment);
      if (platform == null || !platform.isUsingForwardHeaders()) {
        return;
      }
      applied = "server.forward-headers-strategy is unset on " + platform
          + ", where Spring Boot applies forwarded headers (native)";
    } else if (strategy.equals("framework") || strategy.equals("native")) {
      applied = "server.forward-headers-strategy=" + strategy;
    } else {
      return;
    }
    throw new IllegalStateException("payments.admin-allow-loopback=true and " + applied + ": the client's address"
        + " and host would be taken from X-Forwarded-For, X-Forwarded-Host or Forwarded, which any client can write,"
        + " so a request carrying X-Forwarded-For: 127.0.0.1 would hold the admin routes without the admin key. Set"
        + " payments.admin-allow-loopback=false (environment PAYMENTS_ADMINALLOWLOOPBACK=false) to require the admin"
        + " key from every caller, or server.forward-headers-strategy=none");
  }

  @Bean
  ApiKeys apiKeys(ConfigurableEnvironment environment) {
    return ApiKeys.from(environment);
  }

  @Bean
  FilterRegistrationBean<ApiKeyAuthentication> apiKeyAuthentication(ApiKeys keys, PaymentsProperties properties,
      ConfigurableEnvironment environment) {
    refuseDefaultAdminKeyOffLoopback(properties.adminKey(), environment.getProperty("server.address"));
    refuseLoopbackExemptionWithForwardedHeaders(properties.adminAllowLoopback(), environment);
    AdminAccess admin = new AdminAccess(properties.adminKey(), properties.adminAllowLoopback());
    FilterRegistrationBean<ApiKeyAuthentication> registration =
        new FilterRegistrationBean<>(new ApiKeyAuthentication(keys, admin));
    registration.setName("apiKeyAuthentication");
    registration.addUrlPatterns("/*");
    registration.setOrder(AUTHENTICATION_ORDER);
    return registration;
  }
}
