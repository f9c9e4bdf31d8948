package dev.idem.spring.outbox;

import dev.idem.outbox.OutboxTransport;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A relay route as a Spring bean: events whose destination is {@code <name>} or {@code <name>:<detail>} are sent
 * through {@code transport}. The auto-configured relay ({@link OutboxRelayLifecycle}) starts when at least one
 * {@code OutboxRoute} bean exists, with every one of them.
 *
 * <pre>{@code
 * @Bean
 * OutboxRoute webhooks(WebhookEndpoints endpoints) {
 *   return OutboxRoute.of("webhook", WebhookTransport.builder(endpoints).build());
 * }
 * }</pre>
 *
 * <p>The relay does not close transports. Declare a transport that holds connections as a bean of its own too, so
 * that Spring closes it after the relay has stopped.
 *
 * @param name the route: the part of a destination before {@code ':'}
 * @param transport what sends the route's events
 * @param maxAttempts attempts before an event is dead, 1 to 1000; 0 for {@code idem.outbox.relay.max-attempts}
 */
public record OutboxRoute(String name, OutboxTransport transport, int maxAttempts) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  public OutboxRoute {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("an outbox route name is 1 to 64 of [A-Za-z0-9_.-] (the part of a"
          + " destination before ':'), got '" + name + "'");
    }
    Objects.requireNonNull(transport, "transport");
    if (maxAttempts != 0 && (maxAttempts < 1 || maxAttempts > 1000)) {
      throw new IllegalArgumentException("maxAttempts of route '" + name + "' must be 1 to 1000, or 0 for the"
          + " relay's default, got " + maxAttempts);
    }
  }

  /** A route with the relay's default maximum attempts ({@code idem.outbox.relay.max-attempts}). */
  public static OutboxRoute of(String name, OutboxTransport transport) {
    return new OutboxRoute(name, transport, 0);
  }

  /** The same route, dead after {@code maxAttempts} attempts. */
  public OutboxRoute withMaxAttempts(int maxAttempts) {
    return new OutboxRoute(name, transport, maxAttempts);
  }
}
