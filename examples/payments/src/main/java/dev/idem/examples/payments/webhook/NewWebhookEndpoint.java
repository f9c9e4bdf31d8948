package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.JsonFields;
import dev.idem.outbox.webhook.WebhookTransport;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A validated request to create a webhook endpoint: {@code {"url", "events": [...]}}.
 *
 * @param url an absolute http or https URL of at most {@value #MAX_URL} characters, whose host is a name, four
 *     decimal numbers 0-255 without leading zeros or a bracketed IPv6 address (never an ambiguous numeric form such as
 *     {@code 0177.0.0.1} or {@code 127.1}: see {@link WebhookTransport#isAmbiguousHost})
 * @param events a non-empty subset of {@link EventTypes#KNOWN}, or just {@code "*"}
 */
public record NewWebhookEndpoint(URI url, List<String> events) {
  /** The longest URL accepted. */
  public static final int MAX_URL = 2048;

  public NewWebhookEndpoint {
    events = List.copyOf(events);
  }

  /**
   * The endpoint the body asks for.
   *
   * @throws ApiProblem 400 {@code VALIDATION.url} or {@code VALIDATION.events}
   */
  public static NewWebhookEndpoint parse(JsonNode body) {
    String text = JsonFields.text(body, "url").orElseThrow(() -> ApiProblem.invalid("url",
        "url is required: the absolute http or https URL to POST events to"));
    URI url = url(text);
    JsonNode events = body.get("events");
    if (events == null || !events.isArray() || events.isEmpty()) {
      throw ApiProblem.invalid("events", "events is required: a non-empty array of event types from "
          + EventTypes.KNOWN + ", or [\"*\"] for all");
    }
    if (events.size() > 16) {
      throw ApiProblem.invalid("events", "events may list at most 16 types");
    }
    Set<String> types = new LinkedHashSet<>();
    for (JsonNode e : events) {
      if (!e.isString() || !(EventTypes.KNOWN.contains(e.stringValue()) || EventTypes.ALL.equals(e.stringValue()))) {
        throw ApiProblem.invalid("events", "events must be event types from " + EventTypes.KNOWN
            + ", or \"*\" for all; got " + (e.isString() ? "\"" + e.stringValue() + "\"" : e.toString()));
      }
      types.add(e.stringValue());
    }
    return new NewWebhookEndpoint(url, types.contains(EventTypes.ALL) ? List.of(EventTypes.ALL)
        : new ArrayList<>(types));
  }

  private static URI url(String text) {
    if (text.length() > MAX_URL) {
      throw ApiProblem.invalid("url", "url must be at most " + MAX_URL + " characters");
    }
    URI url;
    try {
      url = new URI(text);
    } catch (URISyntaxException e) {
      throw ApiProblem.invalid("url", "url is not a valid URI: " + e.getReason());
    }
    String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
    if (!url.isAbsolute() || !(scheme.equals("http") || scheme.equals("https"))) {
      throw ApiProblem.invalid("url", "url must be an absolute http or https URL with a host");
    }
    if (WebhookTransport.isAmbiguousHost(host(url))) {
      throw ApiProblem.invalid("url", "url host is an ambiguous numeric form: write an IPv4 address as four decimal"
          + " numbers 0-255 without leading zeros; octal, hex, shortened and one-number forms and a trailing dot are"
          + " refused, because parsers read them as different addresses");
    }
    if (url.getHost() == null || url.getHost().isEmpty()) {
      throw ApiProblem.invalid("url", "url must be an absolute http or https URL with a host");
    }
    if (url.getRawFragment() != null) {
      throw ApiProblem.invalid("url", "url must not have a fragment (#...)");
    }
    return url;
  }

  /**
   * The host as written, also where {@link URI} finds none ({@code 127.1}, {@code 0x7f.0.0.1}, {@code 127.0.0.1.}):
   * the decoded authority without user information and port.
   */
  private static String host(URI url) {
    if (url.getHost() != null) {
      return url.getHost();
    }
    String authority = url.getAuthority();
    if (authority == null) {
      return null;
    }
    String host = authority.substring(authority.lastIndexOf('@') + 1);
    int colon = host.lastIndexOf(':');
    return colon < 0 || host.startsWith("[") ? host : host.substring(0, colon);
  }
}
