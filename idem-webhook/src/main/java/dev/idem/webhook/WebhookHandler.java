package dev.idem.webhook;

import java.sql.Connection;

/**
 * An application's effect for one verified webhook, run by {@link WebhookReceiverServlet} once per {@code webhook-id}:
 * in the inbox's transaction, on {@code connection}, so that the effect and the inbox record commit together.
 *
 * <pre>{@code
 * WebhookHandler handler = (connection, message) -> {
 *   try (PreparedStatement ps = connection.prepareStatement("UPDATE payment SET status = 'settled' WHERE id = ?")) {
 *     ps.setString(1, parsePaymentId(message.bodyText()));
 *     ps.executeUpdate();
 *   }
 *   return "settled";
 * };
 * }</pre>
 */
@FunctionalInterface
public interface WebhookHandler {
  /**
   * Applies a webhook that passed verification and was not processed before.
   *
   * @param connection the inbox's connection, in the open transaction that records the webhook; do not commit, roll
   *     back or close it
   * @param message the verified webhook
   * @return a short result kept with the inbox record (may be null)
   * @throws Exception to refuse the webhook with 500: nothing is committed and the sender's retry processes it again
   */
  String handle(Connection connection, WebhookMessage message) throws Exception;
}
