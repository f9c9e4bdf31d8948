package dev.idem.outbox.webhook;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxResult;
import java.util.List;
import java.util.Objects;

/**
 * Receives Standard Webhooks exactly once, without a web framework: verifies the raw body's signature and timestamp,
 * then processes the event through the {@link Inbox} in one transaction, keyed by {@code webhook-id}. A refused webhook
 * stores nothing. The servlet and Spring adapters call this. The transaction is one the inbox opens
 * ({@link Inbox#processBatchAndCommit}): a new transaction of its store, or of the framework it was built with
 * ({@code Inbox.Builder.transactions}).
 */
public final class WebhookReceiver {
  private final WebhookVerifier verifier;
  private final Inbox inbox;
  private final String consumer;

  private WebhookReceiver(WebhookVerifier verifier, Inbox inbox, String consumer) {
    this.verifier = Objects.requireNonNull(verifier, "verifier");
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.consumer = Objects.requireNonNull(consumer, "consumer");
  }

  /**
   * A receiver for {@code consumer} (the inbox's consumer name, e.g. {@code provider-webhooks}). Each webhook runs in
   * a new transaction of the inbox's; the handler does its work in the transaction it is given (or, with the
   * inbox's transactions of a framework, through that framework's data access).
   */
  public static WebhookReceiver of(String consumer, WebhookVerifier verifier, Inbox inbox) {
    return new WebhookReceiver(verifier, inbox, consumer);
  }

  public String consumer() {
    return consumer;
  }

  public WebhookVerifier verifier() {
    return verifier;
  }

  /**
   * Verifies and processes one webhook in its own transaction.
   *
   * @param message what the handler finds in {@link InboxEvent#message(Class)} (the adapter's view of the request);
   *     may be null
   * @throws WebhookVerificationException when the webhook is refused (answer 401, or 413 for a body too large)
   * @throws dev.idem.outbox.InboxPayloadMismatchException when the id was seen with another body (answer 409)
   * @throws dev.idem.outbox.InboxHandlerException when the handler failed (answer 5xx so that the sender retries)
   */
  public InboxResult receive(String id, String timestamp, String signature, byte[] body, Object message,
      InboxHandler handler) {
    verifier.verify(id, timestamp, signature, body);
    InboxEvent event = new InboxEvent(id, "webhook", body, message);
    return inbox.processBatchAndCommit(consumer, List.of(event), handler).get(0);
  }
}
