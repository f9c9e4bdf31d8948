package dev.idem.outbox.webhook;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxResult;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Receives Standard Webhooks exactly once, without a web framework: verifies the raw body's signature and timestamp,
 * then processes the event through the {@link Inbox} in one transaction, keyed by {@code webhook-id}. A refused webhook
 * stores nothing. The servlet and Spring adapters call this.
 */
public final class WebhookReceiver {
  private final WebhookVerifier verifier;
  private final Inbox inbox;
  private final String consumer;
  private final Transactions transactions;

  /**
   * Runs the inbox's work in a transaction the caller manages (for JDBC, {@code JdbcTransaction.of(connection)} on
   * a connection of that transaction with auto-commit off), committing when {@code work} returns and rolling back
   * when it throws. A framework's transaction lets the handler's own data access (a template, a repository) join the
   * inbox's transaction.
   */
  @FunctionalInterface
  public interface Transactions {
    InboxResult inTransaction(Function<StoreTransaction, InboxResult> work);
  }

  private WebhookReceiver(WebhookVerifier verifier, Inbox inbox, String consumer, Transactions transactions) {
    this.verifier = Objects.requireNonNull(verifier, "verifier");
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.consumer = Objects.requireNonNull(consumer, "consumer");
    this.transactions = transactions;
  }

  /**
   * A receiver for {@code consumer} (the inbox's consumer name, e.g. {@code provider-webhooks}). Each webhook runs in
   * a transaction of its own of the inbox's store; the handler must do its work in the transaction it is given.
   */
  public static WebhookReceiver of(String consumer, WebhookVerifier verifier, Inbox inbox) {
    return new WebhookReceiver(verifier, inbox, consumer, null);
  }

  /** This receiver, running each webhook in {@code transactions} instead of a transaction of its own. */
  public WebhookReceiver withTransactions(Transactions transactions) {
    return new WebhookReceiver(verifier, inbox, consumer, Objects.requireNonNull(transactions, "transactions"));
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
    if (transactions != null) {
      return transactions.inTransaction(tx -> inbox.process(tx, consumer, event, handler));
    }
    return inbox.processBatchAndCommit(consumer, List.of(event), handler).get(0);
  }
}
