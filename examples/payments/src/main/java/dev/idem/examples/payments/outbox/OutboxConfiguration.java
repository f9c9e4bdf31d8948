package dev.idem.examples.payments.outbox;

import dev.idem.core.crypto.Encryption;
import dev.idem.examples.payments.PaymentsProperties;
import dev.idem.examples.payments.PaymentsSchema;
import dev.idem.examples.payments.inbox.InboxCounts;
import dev.idem.examples.payments.inbox.ProviderConfirmations;
import dev.idem.examples.payments.inbox.ProviderWebhookController;
import dev.idem.examples.payments.provider.ProviderWebhookTransport;
import dev.idem.examples.payments.provider.ProviderWebhooks;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.webhook.EventTypes;
import dev.idem.examples.payments.webhook.JdbcWebhookEndpoints;
import dev.idem.examples.payments.webhook.WebhookEvents;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.kafka.KafkaTransport;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.webhook.WebhookReceiver;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookTransport;
import dev.idem.outbox.webhook.WebhookVerifier;
import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import java.net.URI;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The outbox, the inbox and the relay of the service, defined here rather than by an auto-configuration so that the
 * example shows every part: the {@code webhook} route sends tenants' events through a {@link WebhookTransport} over
 * {@link JdbcWebhookEndpoints}; the {@code provider-webhook} route sends the simulated provider's webhooks to this
 * service's own {@code POST /webhooks/provider}, where a {@link WebhookReceiver} takes them in through the inbox;
 * when {@code payments.kafka.bootstrap-servers} is set, the {@code kafka} route publishes tenants' events to Kafka
 * through a {@link KafkaTransport} ({@link KafkaEvents} writes them). Settings are {@code payments.outbox.*},
 * {@code payments.webhooks.*}, {@code payments.provider.webhook-*} and {@code payments.kafka.*}.
 */
@Configuration(proxyBeanMethods = false)
public class OutboxConfiguration {
  private static final Logger LOG = LoggerFactory.getLogger(OutboxConfiguration.class);
  /** The largest provider webhook the service accepts. */
  static final int MAX_PROVIDER_WEBHOOK_BYTES = 64 * 1024;

  /** The outbox table ({@code idem_outbox}), created at startup where missing. */
  @Bean
  JdbcOutboxStore outboxStore(DataSource dataSource, PaymentsSchema schema) {
    return JdbcOutboxStore.builder(dataSource).dialect(schema.dialect()).createSchemaIfMissing(true).build();
  }

  /** Every route's payloads are sealed at rest when there is an {@link Encryption} bean (idem.encryption.*). */
  @Bean
  Outbox outbox(JdbcOutboxStore store, Clock clock, ObjectProvider<Encryption> encryption) {
    Outbox.Builder outbox = Outbox.builder(store).clock(clock);
    Encryption sealing = encryption.getIfAvailable();
    return (sealing == null ? outbox : outbox.encryptAll(sealing)).build();
  }

  @Bean
  InboxCounts inboxCounts() {
    return new InboxCounts();
  }

  /**
   * The inbox table ({@code idem_inbox}), created at startup where missing. It tells every {@link InboxListener}
   * bean: {@link InboxCounts}, and meters where the application has them.
   */
  @Bean
  JdbcInboxStore inboxStore(DataSource dataSource, PaymentsSchema schema) {
    return JdbcInboxStore.builder(dataSource).dialect(schema.dialect()).createSchemaIfMissing(true).build();
  }

  @Bean
  Inbox inbox(JdbcInboxStore store, Clock clock, ObjectProvider<InboxListener> listeners) {
    return Inbox.builder(store).clock(clock).listener(Listeners.inbox(listeners.orderedStream().toList())).build();
  }

  /** Logs the events the relay gives up on. */
  @Bean
  DeadEventLog deadEventLog() {
    return new DeadEventLog();
  }

  @Bean
  JdbcWebhookEndpoints webhookEndpoints(DataSource dataSource, PaymentsSchema schema, Clock clock,
      PaymentsProperties properties, ObjectProvider<Encryption> encryption) {
    return new JdbcWebhookEndpoints(dataSource, clock, properties.webhooks().maxEndpointsPerTenant(),
        encryption.getIfAvailable());
  }

  @Bean
  WebhookEvents webhookEvents(Outbox outbox, JdbcWebhookEndpoints endpoints, Json json) {
    return new WebhookEvents(outbox, endpoints, json);
  }

  /** Tenants' events for Kafka: written only while {@code payments.kafka.bootstrap-servers} is set. */
  @Bean
  KafkaEvents kafkaEvents(Outbox outbox, Json json, PaymentsProperties properties) {
    return new KafkaEvents(outbox, json, properties.kafka());
  }

  /** Where payments and refunds write their events: tenants' webhooks and Kafka. */
  @Bean
  TenantEvents tenantEvents(WebhookEvents webhooks, KafkaEvents kafka) {
    return new TenantEvents(webhooks, kafka);
  }

  /**
   * Kafka, when {@code payments.kafka.bootstrap-servers} is set: an idempotent producer ({@code acks=all}) named
   * {@code payments}, with the topics of {@code payments.kafka.topics} and {@code payments.kafka.default-topic}. It
   * connects on its first send, so the service starts while the brokers are away (its events wait and are
   * retried). Closed on shutdown: after {@link OutboxWork} has stopped the relay, which stops before any bean is
   * destroyed.
   */
  @Bean
  @Conditional(KafkaConfigured.class)
  KafkaTransport paymentsKafkaTransport(PaymentsProperties properties) {
    PaymentsProperties.Kafka k = properties.kafka();
    Map<String, Object> config = new LinkedHashMap<>(k.properties());
    config.put("bootstrap.servers", k.bootstrapServers());
    KafkaTransport.Builder builder = KafkaTransport.builder(config).name("payments").sendTimeout(k.sendTimeout());
    k.topics().forEach((type, topic) -> {
      if (!topic.isEmpty()) {
        builder.topic(type, topic);
      }
    });
    if (k.defaultTopic() != null) {
      builder.defaultTopic(k.defaultTopic());
    }
    KafkaTransport transport;
    try {
      transport = builder.build();
    } catch (IllegalArgumentException e) {
      // the values were checked when bound: what is left is a producer setting that contradicts exactly-once
      throw new IllegalArgumentException("payments.kafka.properties: " + e.getMessage(), e);
    }
    Map<String, String> published = new LinkedHashMap<>();
    EventTypes.KNOWN.forEach(type -> k.topicOf(type).ifPresent(topic -> published.put(type, topic)));
    if (published.isEmpty()) {
      LOG.warn("payments.kafka.bootstrap-servers is set but no event type has a topic (payments.kafka.topics[<type>],"
          + " payments.kafka.default-topic): nothing is published to Kafka");
    } else {
      LOG.info("events to Kafka at {} through transport {}: {}", k.bootstrapServers(), transport.name(), published);
    }
    return transport;
  }

  /**
   * The provider's webhooks and their secret: {@code payments.provider.webhook-secret}, or a new one at each start
   * (the provider and the service share this process, so both sides know it).
   */
  @Bean
  ProviderWebhooks providerWebhooks(Outbox outbox, Json json, PaymentsProperties properties) {
    String configured = properties.provider().webhookSecret();
    WebhookSecret secret;
    if (configured == null || configured.isBlank()) {
      secret = WebhookSecret.generate();
      LOG.info("payments.provider.webhook-secret is not set: the provider signs its webhooks with a new random"
          + " secret");
    } else {
      try {
        secret = WebhookSecret.parse(configured.trim());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("payments.provider.webhook-secret: " + e.getMessage());
      }
    }
    return ProviderWebhooks.to(outbox, json, secret);
  }

  /** Verifies the provider's webhooks and processes each once through the inbox. */
  @Bean
  WebhookReceiver providerWebhookReceiver(ProviderWebhooks webhooks, Inbox inbox) {
    WebhookVerifier verifier = WebhookVerifier.builder(webhooks.secret()).maxBodyBytes(MAX_PROVIDER_WEBHOOK_BYTES)
        .build();
    return WebhookReceiver.of(ProviderWebhookController.CONSUMER, verifier, inbox);
  }

  @Bean
  ProviderConfirmations providerConfirmations(DataSource dataSource, PaymentsSchema schema, Json json, Clock clock) {
    return new ProviderConfirmations(dataSource, json, clock);
  }

  /** Tenants' webhooks: endpoints from the table, a 410 Gone disables one. */
  @Bean
  WebhookTransport webhookTransport(JdbcWebhookEndpoints endpoints, PaymentsProperties properties, Clock clock) {
    return WebhookTransport.builder(endpoints).timeout(properties.webhooks().timeout()).clock(clock)
        .userAgent("Idem-Payments-Webhooks/1").allowPrivateAddresses(properties.webhooks().allowPrivateAddresses())
        .build();
  }

  /**
   * The provider's side: to {@code payments.provider.webhook-url}, or to this service on 127.0.0.1 at the port it
   * listens on ({@code local.server.port}, known once the web server started). Its draws of webhooks to re-send
   * have their own generator (seeded from {@code payments.provider.seed} when set), so that they never shift the
   * sequence of the provider's faults.
   */
  @Bean
  ProviderWebhookTransport providerWebhookTransport(ProviderWebhooks webhooks, PaymentsProperties properties,
      Environment environment) {
    PaymentsProperties.Provider p = properties.provider();
    RandomGenerator resends = p.seed() == null ? new Random() : new Random(p.seed() ^ 0x5DEECE66DL);
    Supplier<Optional<URI>> url;
    if (p.webhookUrl() != null && !p.webhookUrl().isBlank()) {
      URI fixed = checkUrl(p.webhookUrl().trim());
      url = () -> Optional.of(fixed);
    } else {
      url = () -> Optional.ofNullable(environment.getProperty("local.server.port"))
          .filter(port -> !port.isBlank() && !port.startsWith("-"))
          .map(port -> URI.create("http://127.0.0.1:" + port + contextPath(environment) + "/webhooks/provider"));
    }
    return new ProviderWebhookTransport(url, webhooks.secret(), p.webhookResendRatio(), resends,
        properties.webhooks().timeout());
  }

  /**
   * The relay, started by {@link OutboxWork}; closed on shutdown. Routes: {@code webhook}, {@code provider-webhook}
   * and, when Kafka is on, {@code kafka}. It tells every {@link OutboxListener} bean:
   * {@link DeadEventLog}, and meters where the application has them. (Named so that it never meets the bean name of
   * an auto-configured relay.)
   */
  @Bean
  OutboxRelay paymentsOutboxRelay(Outbox outbox, WebhookTransport webhookTransport,
      ProviderWebhookTransport providerWebhookTransport, ObjectProvider<KafkaTransport> kafkaTransport,
      PaymentsProperties properties, ObjectProvider<OutboxListener> listeners) {
    PaymentsProperties.Outbox o = properties.outbox();
    try {
      OutboxRelay.Builder relay = OutboxRelay.builder(outbox)
          .name("payments")
          .route(WebhookEvents.ROUTE, webhookTransport)
          .route(ProviderWebhooks.ROUTE, providerWebhookTransport);
      KafkaTransport kafka = kafkaTransport.getIfAvailable();
      if (kafka != null) {
        relay.route(KafkaEvents.ROUTE, kafka);
      } else if (properties.kafka().enabled()) {
        throw new IllegalStateException("payments.kafka.bootstrap-servers is set but there is no Kafka transport");
      }
      return relay
          .maxAttempts(o.maxAttempts())
          .threads(o.threads())
          .batchSize(o.batchSize())
          .pollInterval(o.pollInterval())
          .lease(o.lease())
          .backoff(Backoff.exponential(o.backoffInitial(), o.backoffMax(), Jitter.EQUAL))
          .listener(Listeners.outbox(listeners.orderedStream().toList()))
          .build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("payments.outbox: " + e.getMessage(), e);
    }
  }

  @Bean
  OutboxWork outboxWork(OutboxRelay relay, Outbox outbox, Inbox inbox, PaymentsProperties properties) {
    PaymentsProperties.Outbox o = properties.outbox();
    return new OutboxWork(relay, outbox, inbox, o.enabled(), o.retention(), o.inboxRetention(), o.purgeInterval());
  }

  /**
   * Kafka is on: {@code payments.kafka.bootstrap-servers} is set and not blank, read with the binder's relaxed names
   * (an environment variable {@code PAYMENTS_KAFKA_BOOTSTRAPSERVERS} counts), as {@link PaymentsProperties.Kafka}
   * reads it.
   */
  static final class KafkaConfigured implements Condition {
    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
      return Binder.get(context.getEnvironment()).bind("payments.kafka.bootstrap-servers", String.class)
          .map(servers -> !servers.isBlank()).orElse(false);
    }
  }

  private static String contextPath(Environment environment) {
    String path = environment.getProperty("server.servlet.context-path", "");
    return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  private static URI checkUrl(String text) {
    try {
      URI url = URI.create(text);
      String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
      if (url.getHost() != null && (scheme.equals("http") || scheme.equals("https"))) {
        return url;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw new IllegalArgumentException("payments.provider.webhook-url must be an absolute http or https URL, got '"
        + text + "'");
  }
}
