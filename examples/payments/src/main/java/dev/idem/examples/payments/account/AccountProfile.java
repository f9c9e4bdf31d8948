package dev.idem.examples.payments.account;

import dev.idem.examples.payments.payment.Metadata;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.JsonFields;
import java.util.Map;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A validated body of {@code PUT /accounts/{id}}: {@code {"name", "email", "metadata"?}}, the whole profile (a
 * {@code PUT} replaces every field; an absent {@code metadata} is none).
 */
public record AccountProfile(String name, String email, Map<String, String> metadata) {
  public static final int MAX_NAME = 200;
  public static final int MAX_EMAIL = 254;
  private static final Pattern EMAIL = Pattern.compile("[^@\\s]+@[^@\\s]+\\.[^@\\s]+");

  /**
   * The profile the body asks for.
   *
   * @throws ApiProblem 400 {@code VALIDATION.<field>} for an unknown, missing or invalid field
   */
  public static AccountProfile parse(JsonNode body) {
    for (String field : body.propertyNames()) {
      if (!field.equals("name") && !field.equals("email") && !field.equals("metadata")) {
        throw ApiProblem.invalid(field, "an account profile has name, email and metadata; not " + field);
      }
    }
    String name = JsonFields.text(body, "name").orElse(null);
    if (name == null || name.isBlank() || name.length() > MAX_NAME) {
      throw ApiProblem.invalid("name", "name is required: 1 to " + MAX_NAME + " characters");
    }
    String email = JsonFields.text(body, "email").orElse(null);
    if (email == null || email.length() > MAX_EMAIL || !EMAIL.matcher(email).matches()) {
      throw ApiProblem.invalid("email", "email is required: an address such as ada@example.com, at most "
          + MAX_EMAIL + " characters");
    }
    return new AccountProfile(name, email, Metadata.parse(body.get("metadata")));
  }
}
