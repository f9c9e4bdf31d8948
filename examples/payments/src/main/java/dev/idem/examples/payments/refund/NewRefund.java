package dev.idem.examples.payments.refund;

import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.JsonFields;
import dev.idem.servlet.Problem;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import tools.jackson.databind.JsonNode;

/**
 * A validated request to refund: {@code {"payment_id", "amount"}}. Type checks come before the key is used (nothing
 * stored), value checks inside the first phase (kept), as for payments.
 */
public record NewRefund(String paymentId, long amount) {
  /** Checks the JSON types of the fields. */
  public static void checkTypes(JsonNode body) {
    JsonFields.text(body, "payment_id");
    JsonFields.requireIntegerType(body, "amount");
  }

  /** The refund the body asks for; a 400 {@code VALIDATION.<field>} otherwise. */
  public static NewRefund parse(JsonNode body) {
    checkTypes(body);
    Map<String, String> errors = new LinkedHashMap<>();
    String paymentId = JsonFields.text(body, "payment_id").orElse(null);
    if (paymentId == null || paymentId.isBlank()) {
      errors.put("payment_id", "payment_id is required");
    } else if (paymentId.length() > 64) {
      errors.put("payment_id", "payment_id must be at most 64 characters");
    }
    OptionalLong amount = JsonFields.integer(body, "amount");
    if (!JsonFields.present(body, "amount")) {
      errors.put("amount", "amount is required (an integer in minor units)");
    } else if (amount.isEmpty() || amount.getAsLong() <= 0) {
      errors.put("amount", "amount must be a positive integer (minor units)");
    }
    if (!errors.isEmpty()) {
      Map.Entry<String, String> first = errors.entrySet().iterator().next();
      throw new ApiProblem(Problem.of(400, "VALIDATION." + first.getKey(), "Invalid request")
          .withDetail(String.join("; ", errors.values())).with("fields", new ArrayList<>(errors.keySet())));
    }
    return new NewRefund(paymentId, amount.getAsLong());
  }
}
