package dev.idem.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.memory.InMemoryOutboxStore;
import dev.idem.retry.Backoff;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What an error thrown by a transport or a listener does to the relay, on the in-memory store. */
class OutboxRelayErrorsTest {
  final Outbox outbox = Outbox.builder(new InMemoryOutboxStore()).build();
  final Set<String> delivered = ConcurrentHashMap.newKeySet();

  UUID enqueue(String destination, String payload) throws Exception {
    return outbox.inTransaction(tx -> outbox.enqueue(tx, OutboxEvent.builder("thing").aggregate("thing", payload)
        .payload("{\"p\":\"" + payload + "\"}").destination(destination).build()));
  }

  /** Throws a StackOverflowError for the payload "boom" (from the default sendAll, which catches Exception only). */
  OutboxTransport transport(CountDownLatch deliveries) {
    return m -> {
      if (m.payload().contains("boom")) {
        throw new StackOverflowError("deep recursion in the transport");
      }
      delivered.add(m.payload());
      deliveries.countDown();
      return DeliveryResult.delivered();
    };
  }

  @Test
  void aStackOverflowOfATransportIsAFailedAttemptRetriedThenDeadWhileOtherRoutesAreDelivered() throws Exception {
    CountDownLatch deliveries = new CountDownLatch(1);
    OutboxTransport transport = transport(deliveries);
    OutboxRelay relay = OutboxRelay.builder(outbox).route("bad", transport).route("good", transport)
        .maxAttempts(2).backoff(Backoff.none()).build();
    UUID bad = enqueue("bad", "boom");
    UUID good = enqueue("good", "fine");

    assertThat(relay.runOnce()).isEqualTo(2);
    OutboxEntry first = outbox.find(bad).orElseThrow();
    assertThat(first.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(first.attempts()).isEqualTo(1);
    assertThat(first.lastError()).contains("StackOverflowError: deep recursion in the transport");
    assertThat(outbox.find(good).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(delivered).containsExactly("{\"p\":\"fine\"}");

    assertThat(relay.runOnce()).isEqualTo(1); // retried, and dead after maxAttempts
    OutboxEntry last = outbox.find(bad).orElseThrow();
    assertThat(last.status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(last.attempts()).isEqualTo(2);
    assertThat(relay.runOnce()).isZero();
  }

  @Test
  void aStartedRelayKeepsItsWorkerAfterAStackOverflowAndDeliversLaterEvents() throws Exception {
    CountDownLatch deliveries = new CountDownLatch(2);
    CountDownLatch dead = new CountDownLatch(1);
    OutboxTransport transport = transport(deliveries);
    OutboxRelay relay = OutboxRelay.builder(outbox).route("bad", transport).route("good", transport)
        .maxAttempts(3).backoff(Backoff.none()).threads(1).listener(new OutboxListener() {
          @Override
          public void failed(String r, OutboxMessage message, DeliveryResult result, boolean isDead) {
            if (isDead) {
              dead.countDown();
            }
          }
        }).build();
    UUID bad = enqueue("bad", "boom");
    enqueue("good", "one");
    relay.start();
    try {
      assertThat(dead.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(outbox.find(bad).orElseThrow().attempts()).isEqualTo(3);
      assertThat(relay.isRunning()).isTrue();
      enqueue("good", "two"); // the one worker is still there to send it
      assertThat(deliveries.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(delivered).containsExactlyInAnyOrder("{\"p\":\"one\"}", "{\"p\":\"two\"}");
      assertThat(relay.isRunning()).isTrue();
    } finally {
      relay.close();
    }
    assertThat(relay.isRunning()).isFalse();
  }

  @Test
  void aListenerThatThrowsAnErrorDoesNotStopDelivery() throws Exception {
    CountDownLatch deliveries = new CountDownLatch(2);
    OutboxListener throwing = new OutboxListener() {
      @Override
      public void claimed(String r, int count) {
        throw new AssertionError("a broken listener");
      }

      @Override
      public void delivered(String r, OutboxMessage message, Duration sinceEnqueue) {
        throw new NoClassDefFoundError("a listener missing a class");
      }
    };
    OutboxRelay relay = OutboxRelay.builder(outbox).route("good", transport(deliveries)).threads(1)
        .listener(throwing).build();
    UUID first = enqueue("good", "one");
    assertThat(relay.runOnce()).isEqualTo(1);
    assertThat(outbox.find(first).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
    enqueue("good", "two");
    relay.start();
    try {
      assertThat(deliveries.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(relay.isRunning()).isTrue();
    } finally {
      relay.close();
    }
  }

  @Test
  void anErrorOfTheJvmEndsTheWorkerAndIsReportedAndTheRelayIsNoLongerRunning() throws Exception {
    AtomicReference<Throwable> reported = new AtomicReference<>();
    CountDownLatch ended = new CountDownLatch(1);
    OutOfMemoryError oom = new OutOfMemoryError("test: Java heap space");
    OutboxRelay relay = OutboxRelay.builder(outbox).route("good", m -> {
      throw oom;
    }).threads(1).listener(new OutboxListener() {
      @Override
      public void relayError(String r, Throwable error) {
        reported.set(error);
        ended.countDown();
      }
    }).build();
    enqueue("good", "one");
    relay.start();
    try {
      assertThat(ended.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(reported.get()).isSameAs(oom);
      assertThat(relay.isRunning()).isFalse(); // its only worker ended
      assertThat(OutboxRelay.fatal(oom)).isTrue();
      assertThat(OutboxRelay.fatal(new InternalError("x"))).isTrue();
      assertThat(OutboxRelay.fatal(new StackOverflowError())).isFalse();
      assertThat(OutboxRelay.fatal(new AssertionError())).isFalse();
    } finally {
      relay.close();
    }
  }
}
