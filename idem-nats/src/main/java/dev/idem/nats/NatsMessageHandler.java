package dev.idem.nats;

import io.nats.client.Message;
import java.sql.Connection;

/**
 * The effect of one JetStream message, run by a {@link NatsInboxConsumer} inside the inbox transaction: write with
 * {@code connection} and the writes commit together with the inbox record, or not at all.
 *
 * <pre>{@code
 * NatsMessageHandler handler = (connection, message) -> {
 *   try (PreparedStatement ps = connection.prepareStatement("INSERT INTO ledger (event_json) VALUES (?)")) {
 *     ps.setString(1, new String(message.getData(), StandardCharsets.UTF_8));
 *     ps.executeUpdate();
 *   }
 *   return "booked";
 * };
 * }</pre>
 */
@FunctionalInterface
public interface NatsMessageHandler {
  /**
   * Applies the message.
   *
   * @param connection the inbox transaction's connection; do not commit, roll back or close it
   * @param message the JetStream message: subject, headers and data; do not acknowledge it, the consumer does
   * @return a short result kept by the inbox and returned again to duplicates; may be null
   * @throws Exception to roll the transaction back; the message is negatively acknowledged and delivered again
   */
  String handle(Connection connection, Message message) throws Exception;
}
