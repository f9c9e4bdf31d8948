package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.JsonFields;
import dev.idem.servlet.Problem;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A validated request to create a payment: {@code {"account_id", "amount", "currency", "description"?}}.
 *
 * <p>Validation has two stages. {@link #checkTypes} refuses JSON of the wrong type before the idempotency key is used,
 * so nothing is stored. {@link #parse} judges the values (required, range, format) inside the first phase, and its
 * 400 is kept and replayed like any deterministic answer.
 */
public record NewPayment(String accountId, long amount, String currency, String description) {
  /** The largest amount, in minor units. */
  public static final long MAX_AMOUNT = 100_000_000_000L;
  public static final int MAX_DESCRIPTION = 500;
  private static final Pattern ACCOUNT = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
  private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");

  /**
   * Checks the JSON types of the fields.
   *
   * @throws ApiProblem 400 {@code VALIDATION.<field>} for the first field of the wrong type
   */
  public static void checkTypes(JsonNode body) {
    JsonFields.text(body, "account_id");
    JsonFields.requireIntegerType(body, "amount");
    JsonFields.text(body, "currency");
    JsonFields.text(body, "description");
  }

  /**
   * The payment the body asks for.
   *
   * @throws ApiProblem 400 {@code VALIDATION.<field>} naming the first invalid field, with all of them in
   *     {@code fields}
   */
  public static NewPayment parse(JsonNode body) {
    checkTypes(body);
    Map<String, String> errors = new LinkedHashMap<>();
    String accountId = JsonFields.text(body, "account_id").orElse(null);
    if (accountId == null) {
      errors.put("account_id", "account_id is required");
    } else if (!ACCOUNT.matcher(accountId).matches()) {
      errors.put("account_id", "account_id must be 1 to 64 letters, digits or _ . : -");
    }
    OptionalLong amount = JsonFields.integer(body, "amount");
    if (!JsonFields.present(body, "amount")) {
      errors.put("amount", "amount is required (an integer in minor units)");
    } else if (amount.isEmpty() || amount.getAsLong() <= 0 || amount.getAsLong() > MAX_AMOUNT) {
      errors.put("amount", "amount must be an integer from 1 to " + MAX_AMOUNT + " (minor units)");
    }
    String currency = JsonFields.text(body, "currency").orElse(null);
    if (currency == null) {
      errors.put("currency", "currency is required (ISO 4217, such as EUR)");
    } else if (!CURRENCY.matcher(currency).matches()) {
      errors.put("currency", "currency must be 3 upper-case letters (ISO 4217, such as EUR)");
    }
    String description = JsonFields.text(body, "description").orElse(null);
    if (description != null && description.length() > MAX_DESCRIPTION) {
      errors.put("description", "description must be at most " + MAX_DESCRIPTION + " characters");
    }
    if (!errors.isEmpty()) {
      throw invalid(errors);
    }
    return new NewPayment(accountId, amount.getAsLong(), currency, description);
  }

  /** A 400 problem for the first invalid field, listing all of them. */
  static ApiProblem invalid(Map<String, String> errors) {
    Map.Entry<String, String> first = errors.entrySet().iterator().next();
    List<String> fields = new ArrayList<>(errors.keySet());
    return new ApiProblem(Problem.of(400, "VALIDATION." + first.getKey(), "Invalid request")
        .withDetail(String.join("; ", errors.values())).with("fields", fields));
  }
}
