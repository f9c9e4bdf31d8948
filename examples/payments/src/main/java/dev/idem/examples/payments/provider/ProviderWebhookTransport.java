package dev.idem.examples.payments.provider;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.webhook.WebhookEndpoint;
import dev.idem.outbox.webhook.WebhookEndpoints;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookTransport;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * How the simulated provider delivers its webhooks: a {@link WebhookTransport} over one endpoint, the merchant's URL,
 * which is resolved at each send (this service's own port is known only once it listens), signed with the provider's
 * secret. Like real providers, it sends some webhooks twice on purpose: after a delivered batch, each delivered
 * message is POSTed once more with the probability {@code resendRatio}, with the same {@code webhook-id} and body,
 * so the receiver's inbox has duplicates to drop. Thread-safe.
 *
 * <p>While the URL is unknown every message is retried later, never given up.
 */
public final class ProviderWebhookTransport implements OutboxTransport {
  private final Supplier<Optional<URI>> url;
  private final WebhookTransport transport;
  private final double resendRatio;
  private final RandomGenerator random;
  private final AtomicLong delivered = new AtomicLong();
  private final AtomicLong resent = new AtomicLong();

  /**
   * @param url the merchant's webhook URL, or empty while it is not known yet
   * @param secret the provider's signing secret
   * @param resendRatio the fraction of delivered webhooks sent a second time, 0 to 1
   * @param random the draws that pick them (draws synchronise on it)
   * @param timeout per request
   */
  public ProviderWebhookTransport(Supplier<Optional<URI>> url, WebhookSecret secret, double resendRatio,
      RandomGenerator random, Duration timeout) {
    if (!(resendRatio >= 0 && resendRatio <= 1)) {
      throw new IllegalArgumentException("resendRatio must be from 0 to 1, got " + resendRatio);
    }
    this.url = Objects.requireNonNull(url, "url");
    this.resendRatio = resendRatio;
    this.random = Objects.requireNonNull(random, "random");
    Objects.requireNonNull(secret, "secret");
    WebhookEndpoints merchant = new WebhookEndpoints() {
      @Override
      public Optional<WebhookEndpoint> find(String id) {
        return url.get().map(u -> new WebhookEndpoint(id, u, List.of(secret), true));
      }

      @Override
      public void disable(String id, String reason) {
        // the provider never stops serving its one merchant: this event dies (410), later ones are sent
      }
    };
    // the simulator calls this very service, on 127.0.0.1 unless configured otherwise
    this.transport = WebhookTransport.builder(merchant).timeout(timeout).userAgent("Idem-Provider-Simulator/1")
        .allowPrivateAddresses(true).build();
  }

  @Override
  public DeliveryResult send(OutboxMessage message) {
    return sendAll(List.of(message)).get(0);
  }

  @Override
  public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    if (url.get().isEmpty()) {
      List<DeliveryResult> later = new ArrayList<>(messages.size());
      for (int i = 0; i < messages.size(); i++) {
        later.add(DeliveryResult.retry("the merchant's webhook URL is not known yet (the service is starting)",
            null));
      }
      return later;
    }
    List<DeliveryResult> results = transport.sendAll(messages);
    List<OutboxMessage> again = new ArrayList<>();
    for (int i = 0; i < results.size(); i++) {
      if (results.get(i).isDelivered()) {
        delivered.incrementAndGet();
        if (draw()) {
          again.add(messages.get(i));
        }
      }
    }
    if (!again.isEmpty()) {
      for (DeliveryResult r : transport.sendAll(again)) {
        if (r.isDelivered()) {
          resent.incrementAndGet();
        }
      }
    }
    return results;
  }

  private boolean draw() {
    if (resendRatio <= 0) {
      return false;
    }
    if (resendRatio >= 1) {
      return true;
    }
    synchronized (random) {
      return random.nextDouble() < resendRatio;
    }
  }

  /** Webhooks the merchant accepted, first sends only. */
  public long delivered() {
    return delivered.get();
  }

  /** Webhooks sent a second time on purpose and accepted again. */
  public long resent() {
    return resent.get();
  }

  @Override
  public String toString() {
    return "ProviderWebhookTransport[resend ratio " + resendRatio + "]";
  }

  /** Stops the inner transport's threads, interrupting requests in flight. */
  @Override
  public void close() {
    transport.close();
  }
}
