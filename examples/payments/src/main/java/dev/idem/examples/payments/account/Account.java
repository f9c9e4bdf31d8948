package dev.idem.examples.payments.account;

import dev.idem.examples.payments.web.Json;
import dev.idem.servlet.conditional.ETag;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * An account profile of one tenant.
 *
 * @param version 1 when created, incremented by every replacement: its {@link #etag()}
 */
public record Account(String tenant, String id, String name, String email, Map<String, String> metadata,
    long version, Instant createdAt, Instant updatedAt) {

  public Account {
    metadata = Map.copyOf(metadata);
  }

  /** The strong entity-tag of this version of the profile. */
  public ETag etag() {
    return ETag.ofVersion(version);
  }

  public Map<String, Object> toJson() {
    return Json.document("id", id, "name", name, "email", email, "metadata", new TreeMap<>(metadata),
        "created_at", createdAt.toString(), "updated_at", updatedAt.toString());
  }
}
