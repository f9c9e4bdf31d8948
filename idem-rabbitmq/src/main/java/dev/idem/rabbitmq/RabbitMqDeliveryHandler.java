package dev.idem.rabbitmq;

import com.rabbitmq.client.Delivery;
import java.sql.Connection;

/**
 * The effect of one RabbitMQ message, run by a {@link RabbitMqInboxConsumer} inside the inbox transaction: write with
 * {@code connection} and the writes commit together with the inbox record, or not at all.
 *
 * <pre>{@code
 * RabbitMqDeliveryHandler handler = (connection, delivery) -> {
 *   try (PreparedStatement ps = connection.prepareStatement("INSERT INTO shipment (order_json) VALUES (?)")) {
 *     ps.setString(1, new String(delivery.getBody(), StandardCharsets.UTF_8));
 *     ps.executeUpdate();
 *   }
 *   return "shipped";
 * };
 * }</pre>
 */
@FunctionalInterface
public interface RabbitMqDeliveryHandler {
  /**
   * Applies the message.
   *
   * @param connection the inbox transaction's connection; do not commit, roll back or close it
   * @param delivery the message: body, properties (message id, type, headers) and envelope
   * @return a short result kept by the inbox and returned again to duplicates; may be null
   * @throws Exception to roll the transaction back; the message is requeued and delivered again
   */
  String handle(Connection connection, Delivery delivery) throws Exception;
}
