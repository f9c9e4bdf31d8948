package dev.idem.examples.payments;

import dev.idem.examples.payments.webhook.EventTypes;
import dev.idem.kafka.KafkaTransport;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The service's settings under {@code payments.*} (API keys are read separately, see
 * {@link dev.idem.examples.payments.auth.ApiKeys}).
 *
 * @param adminKey the bearer token of the admin routes ({@code payments.admin-key}, default {@code sk_admin})
 * @param adminAllowLoopback whether admin routes are open to loopback callers without a token (default true)
 * @param provider the initial faults, the random seed and the webhooks of the simulated provider, and how the
 *     service's calls to it are retried and guarded by a circuit breaker
 * @param outbox the relay that sends events, and the purge of finished events and old inbox records
 * @param webhooks the tenants' webhook endpoints
 * @param kafka publishing the tenants' events to Kafka as well (off by default)
 * @param http how request bodies are received ({@code payments.http.*})
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(
    @DefaultValue("sk_admin") String adminKey,
    @DefaultValue("true") boolean adminAllowLoopback,
    @DefaultValue Provider provider,
    @DefaultValue Outbox outbox,
    @DefaultValue Webhooks webhooks,
    @DefaultValue Kafka kafka,
    @DefaultValue Http http) {

  /**
   * The simulated provider's initial faults ({@code PUT /admin/faults} changes them at run time) and its webhooks.
   *
   * @param timeoutAfterCommitRate probability that a call commits and then times out
   * @param errorRate probability that a call fails before doing anything
   * @param latencyMs delay added to every call
   * @param refusalRate probability that a call is refused for good before doing anything (422
   *     {@code PROVIDER.refused}; the payment or refund ends {@code failed})
   * @param seed seed of the fault randomness (and, derived from it, of the webhooks re-sent); unset means a random
   *     seed
   * @param webhookSecret the {@code whsec_...} secret the provider signs its webhooks with and the service verifies
   *     them with ({@code payments.provider.webhook-secret}); unset means a new random one at every start
   * @param webhookUrl where the provider sends its webhooks; unset means this service's own
   *     {@code POST /webhooks/provider} on 127.0.0.1 and the port it listens on
   * @param webhookResendRatio the fraction (0 to 1, default 0.2) of webhooks the provider sends twice on purpose,
   *     as real providers do now and then
   * @param retry how the service retries a provider outage ({@code payments.provider.retry.*})
   * @param circuitBreaker the circuit breaker in front of the provider ({@code payments.provider.circuit-breaker.*},
   *     off by default)
   */
  public record Provider(
      @DefaultValue("0") double timeoutAfterCommitRate,
      @DefaultValue("0") double errorRate,
      @DefaultValue("0") long latencyMs,
      @DefaultValue("0") double refusalRate,
      Long seed,
      String webhookSecret,
      String webhookUrl,
      @DefaultValue("0.2") double webhookResendRatio,
      @DefaultValue RetrySettings retry,
      @DefaultValue CircuitBreakerSettings circuitBreaker) {
    /** Checks the resend ratio (the nested settings check themselves). */
    public Provider {
      if (!(webhookResendRatio >= 0 && webhookResendRatio <= 1)) {
        throw new IllegalArgumentException("payments.provider.webhook-resend-ratio must be from 0 to 1, got "
            + webhookResendRatio);
      }
    }

    /**
     * The retry named {@code provider} around every charge and refund ({@code payments.provider.retry.*}). Only an
     * outage is retried (the provider refused the call before applying anything); a timeout after its commit is
     * answered 504 at once and left to the client's retry with the same key. On a request, the retries stay within
     * the request's deadline.
     *
     * @param maxAttempts attempts per call, the first included: 1 to 10 (default 3; 1 turns retries off)
     * @param backoffInitial the smallest delay before a retry (default 20 ms)
     * @param backoffMax the largest delay before a retry (default 200 ms); delays are drawn with decorrelated
     *     jitter between the two
     */
    public record RetrySettings(
        @DefaultValue("3") int maxAttempts,
        @DefaultValue("20ms") Duration backoffInitial,
        @DefaultValue("200ms") Duration backoffMax) {
      /** Checks every value; the message names the property. */
      public RetrySettings {
        if (maxAttempts < 1 || maxAttempts > 10) {
          throw new IllegalArgumentException("payments.provider.retry.max-attempts must be 1 to 10, got "
              + maxAttempts);
        }
        positive("payments.provider.retry.backoff-initial", backoffInitial);
        positive("payments.provider.retry.backoff-max", backoffMax);
        if (backoffMax.compareTo(backoffInitial) < 0) {
          throw new IllegalArgumentException("payments.provider.retry.backoff-max (" + backoffMax + ") must not be"
              + " shorter than payments.provider.retry.backoff-initial (" + backoffInitial + ")");
        }
      }
    }

    /**
     * The circuit breaker in front of the provider ({@code payments.provider.circuit-breaker.*}). Off by default:
     * the fault-injection switch ({@code PUT /admin/faults}) is meant to take effect at once, and an open breaker
     * would keep refusing calls after the faults are lifted. When on and open, a payment or refund answers 503
     * {@code DEPENDENCY.unavailable} (retryable, with {@code Retry-After}), as during an outage, without calling
     * the provider.
     *
     * @param enabled whether the breaker guards the calls (default false)
     * @param windowSize the calls the failure rate is measured over, the last ones (default 100)
     * @param minimumCalls the calls the window must hold before the rate is judged, 1 to window-size (default 20)
     * @param failureRateThreshold the failure rate in percent, above 0 and at most 100, that opens the breaker
     *     (default 50)
     * @param openDuration how long it stays open before letting probe calls through (default 30 s; doubled at each
     *     re-open, up to ten times as long)
     * @param halfOpenProbes the probe calls that must all succeed to close it again (default 5)
     */
    public record CircuitBreakerSettings(
        @DefaultValue("false") boolean enabled,
        @DefaultValue("100") int windowSize,
        @DefaultValue("20") int minimumCalls,
        @DefaultValue("50") double failureRateThreshold,
        @DefaultValue("30s") Duration openDuration,
        @DefaultValue("5") int halfOpenProbes) {
      private static final String PREFIX = "payments.provider.circuit-breaker.";

      /** Checks every value; the message names the property. */
      public CircuitBreakerSettings {
        if (windowSize < 1 || windowSize > 10_000) {
          throw new IllegalArgumentException(PREFIX + "window-size must be 1 to 10000, got " + windowSize);
        }
        if (minimumCalls < 1 || minimumCalls > windowSize) {
          throw new IllegalArgumentException(PREFIX + "minimum-calls must be 1 to window-size (" + windowSize
              + "), got " + minimumCalls);
        }
        if (!(failureRateThreshold > 0 && failureRateThreshold <= 100)) {
          throw new IllegalArgumentException(PREFIX + "failure-rate-threshold must be a percentage above 0 and at"
              + " most 100, got " + failureRateThreshold);
        }
        positive(PREFIX + "open-duration", openDuration);
        if (halfOpenProbes < 1 || halfOpenProbes > 1000) {
          throw new IllegalArgumentException(PREFIX + "half-open-probes must be 1 to 1000, got " + halfOpenProbes);
        }
      }
    }
  }

  /**
   * How request bodies are received ({@code payments.http.*}; see
   * {@link dev.idem.examples.payments.web.RequestBodyGuard}). A body with a length that arrives within the grace is
   * taken without waiting on the connection; any other holds a reader, and so a request thread, while it arrives.
   *
   * @param maxBodyReaders the bodies that may be received at once that way, 1 to 10,000 (default 64, well under
   *     Tomcat's 200 request threads); one more gets 503 {@code TRANSIENT.overloaded} with {@code Retry-After}
   * @param bodyTimeout how long a whole body may take to arrive, from its request's headers (default 10 s); a slower
   *     one gets 408 {@code TRANSIENT.request_timeout}. Tomcat's own read timeout
   *     ({@code server.tomcat.connection-timeout}) ends a body that sends nothing at all
   * @param bodyGrace how long after its headers a body with a {@code Content-Length} may take to arrive without
   *     holding a reader, 0 to 1 s (default 100 ms: a client's body sent in a second packet, even behind a delayed
   *     acknowledgement)
   * @param maxBodyBytes the largest body taken, in bytes (default 262,144); a larger one gets 413. The idempotent
   *     routes take at most {@code idem.filter.max-request-bytes}
   */
  public record Http(
      @DefaultValue("64") int maxBodyReaders,
      @DefaultValue("10s") Duration bodyTimeout,
      @DefaultValue("100ms") Duration bodyGrace,
      @DefaultValue("262144") long maxBodyBytes) {
    /** Checks every value; the message names the property. */
    public Http {
      if (maxBodyReaders < 1 || maxBodyReaders > 10_000) {
        throw new IllegalArgumentException("payments.http.max-body-readers must be 1 to 10000, got "
            + maxBodyReaders);
      }
      positive("payments.http.body-timeout", bodyTimeout);
      if (bodyGrace == null || bodyGrace.isNegative() || bodyGrace.compareTo(Duration.ofSeconds(1)) > 0
          || bodyGrace.compareTo(bodyTimeout) >= 0) {
        throw new IllegalArgumentException("payments.http.body-grace must be 0 to 1s and shorter than"
            + " payments.http.body-timeout, got " + bodyGrace);
      }
      if (maxBodyBytes < 1 || maxBodyBytes > 64L << 20) {
        throw new IllegalArgumentException("payments.http.max-body-bytes must be 1 to 67108864, got "
            + maxBodyBytes);
      }
    }
  }

  /**
   * The outbox relay ({@code payments.outbox.*}): it sends the events that {@code POST /payments} and
   * {@code POST /refunds} write, and the provider's webhooks.
   *
   * @param enabled whether the relay and the purge run (default true); when false, events wait in the outbox
   * @param threads relay worker threads (default 1)
   * @param batchSize events claimed per cycle (default 100)
   * @param pollInterval how long an idle worker waits before looking again (default 250 ms)
   * @param maxAttempts attempts before an event is dead (default 12)
   * @param backoffInitial the delay after a first failed attempt (default 1 s), doubling up to {@code backoffMax}
   * @param backoffMax the longest delay between attempts (default 1 h)
   * @param lease how long a relay holds the events it claimed (default 60 s; longer than a webhook's timeout)
   * @param retention how long delivered and discarded events are kept (default 7 days)
   * @param inboxRetention how long the records of received provider webhooks are kept (default 14 days)
   * @param purgeInterval how often both are purged (default 10 min)
   */
  public record Outbox(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("1") int threads,
      @DefaultValue("100") int batchSize,
      @DefaultValue("250ms") Duration pollInterval,
      @DefaultValue("12") int maxAttempts,
      @DefaultValue("1s") Duration backoffInitial,
      @DefaultValue("1h") Duration backoffMax,
      @DefaultValue("60s") Duration lease,
      @DefaultValue("7d") Duration retention,
      @DefaultValue("14d") Duration inboxRetention,
      @DefaultValue("10m") Duration purgeInterval) {
    public Outbox {
      positive("payments.outbox.backoff-initial", backoffInitial);
      positive("payments.outbox.backoff-max", backoffMax);
      positive("payments.outbox.purge-interval", purgeInterval);
      if (backoffMax.compareTo(backoffInitial) < 0) {
        throw new IllegalArgumentException("payments.outbox.backoff-max (" + backoffMax
            + ") must not be shorter than payments.outbox.backoff-initial (" + backoffInitial + ")");
      }
      if (retention.isNegative() || inboxRetention.isNegative()) {
        throw new IllegalArgumentException("payments.outbox.retention and payments.outbox.inbox-retention must not"
            + " be negative");
      }
      if (inboxRetention.compareTo(retention) < 0) {
        // a delivered event can be replayed until it is purged: its inbox record must outlive it
        throw new IllegalArgumentException("payments.outbox.inbox-retention (" + inboxRetention + ") must not be"
            + " shorter than payments.outbox.retention (" + retention + ")");
      }
    }
  }

  /**
   * The tenants' webhook endpoints ({@code payments.webhooks.*}).
   *
   * @param maxEndpointsPerTenant enabled endpoints a tenant may have (default 20)
   * @param timeout how long one delivery may take, connecting included (default 15 s)
   * @param allowPrivateAddresses whether endpoints may be on loopback or private networks (default false; this
   *     service's own configuration turns it on, because it runs on one machine with local subscribers)
   */
  public record Webhooks(
      @DefaultValue("20") int maxEndpointsPerTenant,
      @DefaultValue("15s") Duration timeout,
      @DefaultValue("false") boolean allowPrivateAddresses) {
    public Webhooks {
      if (maxEndpointsPerTenant < 1 || maxEndpointsPerTenant > 1000) {
        throw new IllegalArgumentException("payments.webhooks.max-endpoints-per-tenant must be 1 to 1000, got "
            + maxEndpointsPerTenant);
      }
      positive("payments.webhooks.timeout", timeout);
    }
  }

  /**
   * Publishing the tenants' events to Kafka ({@code payments.kafka.*}), besides and independently of their webhooks:
   * off unless {@code payments.kafka.bootstrap-servers} is set. When on, the transaction that decides an event
   * ({@code payment.succeeded}, {@code payment.declined}, {@code refund.succeeded}) also writes it to the outbox for
   * the relay's {@code kafka} route, if its type has a topic; see
   * {@link dev.idem.examples.payments.outbox.KafkaEvents}. Every value is checked when the service starts, and a bad
   * one stops it with a message that names the property.
   *
   * <p>Event types (and producer settings) contain dots. Because {@code topics} and {@code properties} map strings
   * to strings, Spring keeps the dots of their keys however they are written: with brackets,
   * {@code payments.kafka.topics[payment.succeeded]=payments}; plainly,
   * {@code payments.kafka.topics.payment.succeeded=payments}; in YAML as a dotted key, nested, or quoted in brackets
   * ({@code "[payment.succeeded]": payments}); and as the environment variable
   * {@code PAYMENTS_KAFKA_TOPICS_PAYMENT_SUCCEEDED=payments}. Brackets are the safe habit: for a map of anything but
   * plain values, a key's dots without brackets would make nested keys.
   *
   * @param bootstrapServers the brokers, {@code host:port[,host:port...]}; unset or blank (the default) turns Kafka
   *     off
   * @param topics the topic of each event type, e.g. {@code payments.kafka.topics[payment.succeeded]=payments}; keys
   *     must be event types the service publishes, values Kafka topic names ({@code [a-zA-Z0-9._-]}, at most 249
   *     characters). A blank value leaves that type out even when {@code default-topic} is set
   * @param defaultTopic the topic of the types that {@code topics} does not name; unset: such types are not
   *     published to Kafka
   * @param sendTimeout how long the relay waits for the broker to acknowledge a batch (default 15 s, 1 s to 5 min);
   *     an event without acknowledgement is retried with the outbox's backoff
   * @param properties further producer settings, e.g. {@code payments.kafka.properties[security.protocol]=SSL}.
   *     Exactly-once delivery fixes some: {@code acks} other than {@code all}, {@code enable.idempotence=false},
   *     serializers or a {@code transactional.id} are refused at startup; {@code bootstrap.servers} belongs in
   *     {@code payments.kafka.bootstrap-servers}
   */
  public record Kafka(
      String bootstrapServers,
      @DefaultValue Map<String, String> topics,
      String defaultTopic,
      @DefaultValue("15s") Duration sendTimeout,
      @DefaultValue Map<String, String> properties) {
    private static final String PREFIX = "payments.kafka.";
    /** One broker address, as Kafka's clients read it: an optional {@code scheme://}, a host or [IPv6], a port. */
    private static final Pattern BROKER = Pattern.compile(
        "(?:[a-zA-Z][a-zA-Z0-9+.-]*://)?(?:\\[[0-9a-zA-Z:.%]+]|[a-zA-Z0-9._-]+):([0-9]{1,5})");

    public Kafka {
      bootstrapServers = bootstrapServers == null || bootstrapServers.isBlank() ? null : bootstrapServers.trim();
      if (bootstrapServers != null) {
        for (String broker : bootstrapServers.split(",", -1)) {
          var m = BROKER.matcher(broker.trim());
          if (!m.matches() || Integer.parseInt(m.group(1)) < 1 || Integer.parseInt(m.group(1)) > 65_535) {
            throw new IllegalArgumentException(PREFIX + "bootstrap-servers must be a comma-separated list of"
                + " host:port, got '" + bootstrapServers + "'");
          }
        }
      }
      // a throwaway builder: the topic names and the timeout are checked by the rules of the transport itself
      KafkaTransport.Builder check = KafkaTransport.builder(Map.of());
      Map<String, String> byType = new TreeMap<>();
      if (topics != null) {
        topics.forEach((type, topic) -> {
          if (!EventTypes.KNOWN.contains(type)) {
            throw new IllegalArgumentException(PREFIX + "topics[" + type + "]: '" + type + "' is not an event type"
                + " of the service; the types are " + EventTypes.KNOWN);
          }
          String name = topic == null ? "" : topic.trim();
          if (!name.isEmpty()) {
            try {
              check.topic(type, name);
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException(PREFIX + "topics[" + type + "]: " + e.getMessage(), e);
            }
          }
          byType.put(type, name);
        });
      }
      topics = Collections.unmodifiableMap(byType);
      defaultTopic = defaultTopic == null || defaultTopic.isBlank() ? null : defaultTopic.trim();
      if (defaultTopic != null) {
        try {
          check.defaultTopic(defaultTopic);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(PREFIX + "default-topic: " + e.getMessage(), e);
        }
      }
      if (sendTimeout == null) {
        throw new IllegalArgumentException(PREFIX + "send-timeout must be a duration from 1s to 5m, got nothing");
      }
      try {
        check.sendTimeout(sendTimeout);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(PREFIX + "send-timeout must be from 1s to 5m, got " + sendTimeout, e);
      }
      Map<String, String> settings = new TreeMap<>();
      if (properties != null) {
        properties.forEach((name, value) -> {
          if (name.isBlank() || value == null) {
            throw new IllegalArgumentException(PREFIX + "properties: every producer setting needs a name and a"
                + " value, got '" + name + "' -> '" + value + "'");
          }
          if (name.equals("bootstrap.servers")) {
            throw new IllegalArgumentException(PREFIX + "properties[bootstrap.servers]: set "
                + PREFIX + "bootstrap-servers instead");
          }
          settings.put(name, value);
        });
      }
      properties = Collections.unmodifiableMap(settings);
    }

    /** Whether events are published to Kafka: {@code bootstrap-servers} is set. */
    public boolean enabled() {
      return bootstrapServers != null;
    }

    /** The topic that events of {@code type} go to, or empty when they are not published to Kafka. */
    public Optional<String> topicOf(String type) {
      if (!enabled()) {
        return Optional.empty();
      }
      String mapped = topics.get(type);
      if (mapped != null) {
        return mapped.isEmpty() ? Optional.empty() : Optional.of(mapped);
      }
      return Optional.ofNullable(defaultTopic);
    }
  }

  private static void positive(String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
    }
  }

  /**
   * The bound on requests in flight ({@code payments.admission.*}), bound on its own prefix so that it needs no
   * component in {@link PaymentsProperties}; see {@link dev.idem.examples.payments.web.InFlightLimit}. The bound
   * keeps the container's request threads (Tomcat: 200) from queueing on a pool that is smaller than them: a request
   * beyond it waits at most {@code max-wait} for a slot, then is answered 503 {@code TRANSIENT.overloaded}, before it
   * has taken a connection.
   *
   * <p>An idempotent request may hold two connections at once (after a failure the executor reads the committed
   * record on a fresh connection while the request's transaction still holds one), so the bound is at most
   * {@code (maximum-pool-size - reserved-connections) / 2}: the requests it admits can always have both of theirs,
   * and the background work (outbox relay and purges, the completer, gauges, health probes) the connections kept
   * for it.
   *
   * @param maxInFlight requests served at once; unset (the default) means derived from the pool as above, set it is
   *     checked against the pool when the service starts
   * @param reservedConnections the pool's connections kept for work that is not a bounded request (default 4)
   * @param maxWait how long a request beyond the bound waits for a slot before it is refused (default 1 s, 0 to
   *     60 s; 0 refuses at once): a burst (a client's concurrent retries of one key, say) passes, a lasting overload
   *     is refused
   * @param retryAfter the {@code Retry-After} of a refusal, whole seconds (default 1 s, at most 1 h)
   */
  @ConfigurationProperties("payments.admission")
  public record Admission(
      Integer maxInFlight,
      @DefaultValue("4") int reservedConnections,
      @DefaultValue("1s") Duration maxWait,
      @DefaultValue("1s") Duration retryAfter) {
    private static final String PREFIX = "payments.admission.";
    /** The pool's setting the bound is checked against. */
    public static final String POOL_SIZE = "spring.datasource.hikari.maximum-pool-size";

    /** Checks every value; the message names the property. */
    public Admission {
      if (maxInFlight != null && (maxInFlight < 1 || maxInFlight > 10_000)) {
        throw new IllegalArgumentException(PREFIX + "max-in-flight must be 1 to 10000 (or unset, to derive it from "
            + POOL_SIZE + "), got " + maxInFlight);
      }
      if (reservedConnections < 0 || reservedConnections > 1000) {
        throw new IllegalArgumentException(PREFIX + "reserved-connections must be 0 to 1000, got "
            + reservedConnections);
      }
      if (maxWait == null || maxWait.isNegative() || maxWait.compareTo(Duration.ofSeconds(60)) > 0) {
        throw new IllegalArgumentException(PREFIX + "max-wait must be from 0s to 60s, got " + maxWait);
      }
      positive(PREFIX + "retry-after", retryAfter);
      if (retryAfter.toNanos() % 1_000_000_000L != 0 || retryAfter.toSeconds() > 3600) {
        throw new IllegalArgumentException(PREFIX + "retry-after must be whole seconds from 1s to 1h, got "
            + retryAfter);
      }
    }

    /**
     * The bound for a pool of {@code poolSize} connections: {@link #maxInFlight} when set, else the most the pool
     * serves with two connections per request after the reserved ones.
     *
     * @throws IllegalStateException the pool cannot give every admitted request two connections; the message names
     *     the properties and their values
     */
    public int boundFor(int poolSize) {
      int most = (poolSize - reservedConnections) / 2;
      if (most < 1) {
        throw new IllegalStateException(POOL_SIZE + " (" + poolSize + ") leaves no two connections for a request once "
            + PREFIX + "reserved-connections (" + reservedConnections + ") are kept for background work: it must be"
            + " at least " + (reservedConnections + 2));
      }
      if (maxInFlight != null && maxInFlight > most) {
        throw new IllegalStateException(PREFIX + "max-in-flight (" + maxInFlight + ") is more than " + POOL_SIZE
            + " (" + poolSize + ") can serve: an idempotent request may hold two connections at once and "
            + PREFIX + "reserved-connections (" + reservedConnections + ") are kept for background work, so at most ("
            + poolSize + " - " + reservedConnections + ") / 2 = " + most + " requests may be in flight; lower the"
            + " bound, unset it to derive it from the pool, or raise the pool (within the database's"
            + " max_connections)");
      }
      return maxInFlight != null ? maxInFlight : most;
    }
  }
}
