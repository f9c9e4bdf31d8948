package dev.idem.spring.outbox;

import dev.idem.outbox.OutboxRelay;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Runs an {@link OutboxRelay} with the application: a fresh relay is built and started when the context starts, and
 * closed when it stops (each worker finishes the batch it is sending and gives back the rest). Auto-configured with
 * every {@link OutboxRoute} bean. The relay is woken after each Spring transaction that enqueued events for it
 * commits ({@link SpringAfterCommit}); inject this to {@link #wakeUp()} it after commits Spring does not manage.
 * Thread-safe.
 */
public final class OutboxRelayLifecycle implements SmartLifecycle {
  private static final System.Logger LOG = System.getLogger(OutboxRelayLifecycle.class.getName());

  private final Supplier<OutboxRelay> relays;
  private volatile OutboxRelay relay;

  /**
   * A lifecycle that runs the relays {@code relays} builds.
   *
   * @param relays builds a relay, not started, each time the context starts
   */
  public OutboxRelayLifecycle(Supplier<OutboxRelay> relays) {
    this.relays = Objects.requireNonNull(relays, "relays");
  }

  @Override
  public synchronized void start() {
    if (relay == null) {
      OutboxRelay r = relays.get();
      r.start();
      relay = r;
      LOG.log(System.Logger.Level.INFO, "outbox " + r + " started");
    }
  }

  @Override
  public synchronized void stop() {
    OutboxRelay r = relay;
    if (r != null) {
      relay = null;
      r.close();
      LOG.log(System.Logger.Level.INFO, "outbox relay '" + r.name() + "' stopped");
    }
  }

  @Override
  public boolean isRunning() {
    return relay != null;
  }

  /** The running relay, empty while the context is stopped. */
  public Optional<OutboxRelay> relay() {
    return Optional.ofNullable(relay);
  }

  /** Wakes the relay's idle workers now instead of at their next poll; does nothing while stopped. */
  public void wakeUp() {
    OutboxRelay r = relay;
    if (r != null) {
      r.wakeUp();
    }
  }
}
