package dev.idem.spring.outbox;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.spring.internal.JoinedHandler;
import dev.idem.outbox.webhook.WebhookReceiver;
import dev.idem.outbox.webhook.WebhookVerifier;
import dev.idem.webhook.WebhookReceiverServlet;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.boot.web.servlet.ServletRegistrationBean;

/**
 * Registers Standard Webhooks receivers ({@link WebhookReceiverServlet}) configured under
 * {@code idem.outbox.webhooks.receivers.<name>}: {@code path}, {@code secrets} (current first, then those being
 * rotated out), {@code tolerance}, {@code max-body-bytes} and {@code consumer} (the inbox consumer, the name by
 * default). Webhooks are deduplicated through the application's {@link Inbox} bean. Needs
 * {@code dev.idem:idem-webhook}, an optional dependency of the starter.
 *
 * <pre>{@code
 * # application.properties
 * idem.outbox.webhooks.receivers.provider.path=/webhooks/provider
 * idem.outbox.webhooks.receivers.provider.secrets=${PROVIDER_WEBHOOK_SECRET},${PROVIDER_WEBHOOK_SECRET_OLD}
 *
 * @Bean
 * ServletRegistrationBean<WebhookReceiverServlet> providerWebhooks(WebhookReceivers receivers) {
 *   return receivers.register("provider", (tx, event) -> {
 *     // in the inbox's transaction, which a JdbcTemplate or a @Transactional service joins
 *     settle(tx.unwrap(Connection.class), event.message(WebhookMessage.class).bodyText());
 *     return "settled";
 *   });
 * }
 * }</pre>
 *
 * <p>The servlet answers 200 to a new or a redelivered webhook, 401 to a forged, tampered or stale one, 409 to an id
 * reused with another body, 413 to a body over the limit and 500 when the handler throws (nothing is stored, so the
 * sender's retry processes it). Exempt the path from CSRF protection: webhooks authenticate by their signature.
 * Each webhook runs in a transaction the inbox opens: with the starter's {@link Inbox} bean, a Spring transaction of
 * the inbox's data source ({@link SpringInboxTransactions}), so the handler's {@code JdbcTemplate} writes and
 * published events commit with the inbox row, and after-commit callbacks run after that commit. Thread-safe.
 */
public final class WebhookReceivers {
  private final IdemOutboxProperties properties;
  private final Supplier<Inbox> inbox;

  /**
   * Receivers configured by {@code properties}.
   *
   * @param inbox the inbox webhooks are recorded in, resolved when a receiver is registered
   */
  public WebhookReceivers(IdemOutboxProperties properties, Supplier<Inbox> inbox) {
    this.properties = Objects.requireNonNull(properties, "properties");
    this.inbox = Objects.requireNonNull(inbox, "inbox");
  }

  /**
   * The servlet of receiver {@code name}, mapped at its {@code path}, to return from a {@code @Bean} method.
   *
   * @throws IllegalStateException when the receiver is not configured, its configuration is invalid (the message names
   *     the property) or there is no single {@link Inbox} bean
   */
  public ServletRegistrationBean<WebhookReceiverServlet> register(String name, InboxHandler handler) {
    IdemOutboxProperties.Receiver config = config(name);
    ServletRegistrationBean<WebhookReceiverServlet> registration =
        new ServletRegistrationBean<>(servlet(name, handler), config.getPath());
    registration.setName("idemWebhookReceiver-" + name);
    return registration;
  }

  /** The servlet of receiver {@code name}, for an application that maps it itself. */
  public WebhookReceiverServlet servlet(String name, InboxHandler handler) {
    Objects.requireNonNull(handler, "handler");
    IdemOutboxProperties.Receiver config = config(name);
    Inbox i = inbox.get();
    if (i == null) {
      throw new IllegalStateException("webhook receiver '" + name + "' needs an Inbox bean: the starter builds one on"
          + " a single DataSource (or a @Primary one) unless idem.outbox.enabled=false; or define your own");
    }
    WebhookVerifier verifier = WebhookVerifier.builder(config.parsedSecrets()).tolerance(config.getTolerance())
        .maxBodyBytes(config.getMaxBodyBytes()).build();
    String consumer = config.getConsumer() == null || config.getConsumer().isBlank() ? name : config.getConsumer();
    return WebhookReceiverServlet.of(WebhookReceiver.of(consumer, verifier, i), JoinedHandler.of(handler, i));
  }

  private IdemOutboxProperties.Receiver config(String name) {
    Objects.requireNonNull(name, "name");
    IdemOutboxProperties.Receiver config = properties.getWebhooks().getReceivers().get(name);
    if (config == null) {
      throw new IllegalStateException("webhook receiver '" + name + "' is not configured: set"
          + " idem.outbox.webhooks.receivers." + name + ".path and .secrets; configured: "
          + properties.getWebhooks().getReceivers().keySet());
    }
    properties.validate();
    return config;
  }
}
