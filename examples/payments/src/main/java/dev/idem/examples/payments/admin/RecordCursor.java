package dev.idem.examples.payments.admin;

import dev.idem.core.RecordKey;
import dev.idem.examples.payments.web.ApiProblem;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The opaque cursor of the records listing: the last record key of a page, base64url-encoded. Scopes, operations and
 * keys hold no control characters, so a line feed separates them.
 */
public final class RecordCursor {
  private RecordCursor() {}

  /** The cursor that resumes a listing after {@code key}. */
  public static String encode(RecordKey key) {
    String joined = key.scope().value() + '\n' + key.operation().name() + '\n' + key.key().value();
    return Base64.getUrlEncoder().withoutPadding().encodeToString(joined.getBytes(StandardCharsets.UTF_8));
  }

  /** @throws ApiProblem 400 {@code VALIDATION.after} for a cursor this service did not make */
  public static RecordKey decode(String cursor) {
    try {
      String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split("\n", -1);
      if (parts.length != 3) {
        throw new IllegalArgumentException("expected 3 parts, got " + parts.length);
      }
      return RecordKey.of(parts[0], parts[1], parts[2]);
    } catch (RuntimeException e) {
      throw ApiProblem.invalid("after", "after must be the next cursor of a previous page");
    }
  }
}
