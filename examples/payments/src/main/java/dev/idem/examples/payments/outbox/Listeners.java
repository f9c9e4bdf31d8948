package dev.idem.examples.payments.outbox;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import java.time.Duration;
import java.util.List;

/**
 * One listener that tells several: the relay and the inbox take one each, and the application has a few (the log of
 * dead events, the inbox counts, meters where a meter registry provides them). One that throws does not keep the
 * others from hearing.
 */
final class Listeners {
  private Listeners() {}

  static OutboxListener outbox(List<OutboxListener> listeners) {
    List<OutboxListener> all = List.copyOf(listeners);
    return new OutboxListener() {
      @Override
      public void claimed(String relay, int count) {
        all.forEach(l -> safely(() -> l.claimed(relay, count)));
      }

      @Override
      public void delivered(String relay, OutboxMessage message, Duration sinceEnqueue) {
        all.forEach(l -> safely(() -> l.delivered(relay, message, sinceEnqueue)));
      }

      @Override
      public void failed(String relay, OutboxMessage message, DeliveryResult result, boolean dead) {
        all.forEach(l -> safely(() -> l.failed(relay, message, result, dead)));
      }

      @Override
      public void decryptionFailed(String relay, OutboxMessage message, DecryptionException error) {
        all.forEach(l -> safely(() -> l.decryptionFailed(relay, message, error)));
      }

      @Override
      public void leaseLost(String relay, int rows) {
        all.forEach(l -> safely(() -> l.leaseLost(relay, rows)));
      }

      @Override
      public void relayError(String relay, Throwable error) {
        all.forEach(l -> safely(() -> l.relayError(relay, error)));
      }
    };
  }

  static InboxListener inbox(List<InboxListener> listeners) {
    List<InboxListener> all = List.copyOf(listeners);
    return new InboxListener() {
      @Override
      public void processed(String consumer) {
        all.forEach(l -> safely(() -> l.processed(consumer)));
      }

      @Override
      public void duplicate(String consumer) {
        all.forEach(l -> safely(() -> l.duplicate(consumer)));
      }

      @Override
      public void payloadMismatch(String consumer, String eventId) {
        all.forEach(l -> safely(() -> l.payloadMismatch(consumer, eventId)));
      }
    };
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException ignored) {
      // a listener must not change what the relay or the inbox does
    }
  }
}
