package dev.idem.examples.payments.auth;

import java.security.Principal;
import java.util.Objects;

/** An authenticated tenant: the owner of payments, refunds and ledger entries, and the idempotency scope. */
public record Tenant(String name) implements Principal {
  public Tenant {
    Objects.requireNonNull(name, "name");
    if (name.isBlank() || name.length() > 200) {
      throw new IllegalArgumentException("a tenant name must be 1 to 200 characters, got '" + name + "'");
    }
  }

  @Override
  public String getName() {
    return name;
  }

  /** The tenant of an authenticated request (the auth filter set it as the principal). */
  public static Tenant of(Principal principal) {
    if (principal instanceof Tenant) {
      return (Tenant) principal;
    }
    throw new IllegalStateException("the request has no tenant; is ApiKeyAuthentication registered?");
  }
}
