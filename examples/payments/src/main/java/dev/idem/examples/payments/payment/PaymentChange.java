package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.JsonFields;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * A validated body of {@code PATCH /payments/{id}}: {@code {"description"?, "metadata"?}}, at least one of them. A
 * field that is present replaces the stored one ({@code null} clears it); an absent field is left alone. Amount,
 * currency, account and status cannot change.
 *
 * @param changesDescription whether {@code description} was sent
 * @param description the new description (null to clear it)
 * @param changesMetadata whether {@code metadata} was sent
 * @param metadata the new metadata (empty to clear it)
 */
public record PaymentChange(boolean changesDescription, String description, boolean changesMetadata,
    Map<String, String> metadata) {

  /**
   * The change the body asks for.
   *
   * @throws ApiProblem 400 {@code VALIDATION.<field>} for an unknown or invalid field, or an empty change
   */
  public static PaymentChange parse(JsonNode body) {
    for (String name : body.propertyNames()) {
      if (!name.equals("description") && !name.equals("metadata")) {
        throw ApiProblem.invalid(name, "only description and metadata of a payment can change; " + name
            + " cannot");
      }
    }
    boolean changesDescription = body.has("description");
    boolean changesMetadata = body.has("metadata");
    if (!changesDescription && !changesMetadata) {
      throw ApiProblem.invalid("body", "send description and/or metadata to change");
    }
    String description = JsonFields.text(body, "description").orElse(null);
    if (description != null && description.length() > NewPayment.MAX_DESCRIPTION) {
      throw ApiProblem.invalid("description", "description must be at most " + NewPayment.MAX_DESCRIPTION
          + " characters");
    }
    Map<String, String> metadata = changesMetadata ? Metadata.parse(body.get("metadata")) : Map.of();
    return new PaymentChange(changesDescription, description, changesMetadata, metadata);
  }
}
