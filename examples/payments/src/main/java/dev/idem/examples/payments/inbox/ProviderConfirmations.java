package dev.idem.examples.payments.inbox;

import dev.idem.examples.payments.provider.ProviderWebhooks;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Map;
import javax.sql.DataSource;
import tools.jackson.databind.JsonNode;

/**
 * The effect of the provider's webhooks ({@code pay_provider_confirmation}): each {@code charge.succeeded} or
 * {@code refund.succeeded} records the provider's confirmation of that charge or refund, keyed by the provider's
 * object id, so that it does not matter whether the webhook arrives before or after the payment records the charge.
 * {@link #apply} runs in the inbox's transaction; its {@code confirmations} counter would show every repeated
 * application, so it staying at 1 is the exactly-once proof. Thread-safe.
 */
public final class ProviderConfirmations {
  private final DataSource dataSource;
  private final Json json;
  private final Clock clock;

  public ProviderConfirmations(DataSource dataSource, Json json, Clock clock) {
    this.dataSource = dataSource;
    this.json = json;
    this.clock = clock;
  }

  /**
   * Applies one webhook on the inbox's connection.
   *
   * @param eventId the webhook's id
   * @param body the verified raw body: {@code {"id", "type", "created", "data": {"id", "amount", ...}}}
   * @return the result the inbox keeps: what was confirmed, or that the type is not one this service acts on
   * @throws ApiProblem 400 {@code VALIDATION.webhook_payload} for a body without the fields of its type
   */
  public String apply(Connection c, String eventId, byte[] body) throws SQLException {
    JsonNode event = json.object(body);
    String type = event.path("type").isString() ? event.path("type").stringValue() : "";
    String objectType;
    if (ProviderWebhooks.CHARGE_SUCCEEDED.equals(type)) {
      objectType = "charge";
    } else if (ProviderWebhooks.REFUND_SUCCEEDED.equals(type)) {
      objectType = "refund";
    } else {
      return "ignored: type '" + (type.length() > 64 ? type.substring(0, 64) : type) + "' needs no action";
    }
    JsonNode data = event.path("data");
    JsonNode objectId = data.path("id");
    JsonNode amount = data.path("amount");
    if (!objectId.isString() || objectId.stringValue().isEmpty() || objectId.stringValue().length() > 64
        || !amount.isIntegralNumber() || !amount.canConvertToLong()) {
      throw ApiProblem.invalid("webhook_payload", type + " needs data.id (a string of at most 64 characters) and"
          + " data.amount (an integer)");
    }
    String id = objectId.stringValue();
    long now = clock.millis();
    try (PreparedStatement ps = c.prepareStatement("UPDATE pay_provider_confirmation"
        + " SET confirmations = confirmations + 1, confirmed_at = ? WHERE provider_object_id = ?")) {
      ps.setLong(1, now);
      ps.setString(2, id);
      if (ps.executeUpdate() == 1) {
        return "confirmed " + objectType + " " + id + " again";
      }
    }
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_provider_confirmation (provider_object_id,"
        + " object_type, event_type, event_id, amount, confirmations, confirmed_at) VALUES (?, ?, ?, ?, ?, 1, ?)")) {
      ps.setString(1, id);
      ps.setString(2, objectType);
      ps.setString(3, type);
      ps.setString(4, eventId.length() > 64 ? eventId.substring(0, 64) : eventId);
      ps.setLong(5, amount.longValue());
      ps.setLong(6, now);
      ps.executeUpdate();
    }
    return "confirmed " + objectType + " " + id;
  }

  /** How many provider objects are confirmed, and how many times confirmations were applied in all. */
  public Map<String, Object> stats() throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*), COALESCE(SUM(confirmations), 0) FROM pay_provider_confirmation");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return Json.document("confirmed_objects", rs.getLong(1), "confirmations_applied", rs.getLong(2));
    }
  }
}
