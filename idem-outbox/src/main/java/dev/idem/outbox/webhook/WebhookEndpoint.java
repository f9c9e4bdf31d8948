package dev.idem.outbox.webhook;

import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A subscriber's endpoint.
 *
 * @param id the endpoint's id: the detail of the destination {@code webhook:<id>}
 * @param url where to POST, http or https
 * @param secrets the signing secrets, newest first (more than one while rotating)
 * @param enabled false once disabled (by a 410 Gone or by its owner): events to it die at once
 */
public record WebhookEndpoint(String id, URI url, List<WebhookSecret> secrets, boolean enabled) {
  public WebhookEndpoint {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(url, "url");
    String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || url.getHost() == null) {
      throw new IllegalArgumentException("a webhook endpoint URL must be absolute http or https");
    }
    secrets = List.copyOf(secrets);
    if (secrets.isEmpty()) {
      throw new IllegalArgumentException("a webhook endpoint needs at least one secret");
    }
  }
}
