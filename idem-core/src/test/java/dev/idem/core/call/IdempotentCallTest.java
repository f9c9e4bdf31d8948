package dev.idem.core.call;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Codec;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentCall;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.KeepPolicy;
import dev.idem.core.KeyExpiredException;
import dev.idem.core.OperationPolicy;
import dev.idem.core.PayloadMismatchException;
import dev.idem.core.RecordKey;
import dev.idem.core.ReplayedFailureException;
import dev.idem.core.RequestInProgressException;
import dev.idem.core.StoredResponse;
import dev.idem.core.WorkFailedException;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.memory.InMemoryIdempotencyStore;
import dev.idem.core.spi.Sleeper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The typed call API in leased mode on the in-memory store (atomic mode needs transactions: see the JDBC module's
 * IdempotentCallJdbcTest): values kept and replayed, failures kept or not, and the refusals. */
class IdempotentCallTest {
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final Idem idem = Idem.builder().name("calls").store(store).build();
  private final AtomicInteger runs = new AtomicInteger();
  private final ExecutorService threads = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    threads.shutdownNow();
  }

  static final class OutOfStockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    OutOfStockException(String message) {
      super(message);
    }
  }

  private static byte[] json(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private IdempotentCall call(String key) {
    return idem.call(RecordKey.of("tenant-1", "orders.place", key)).fingerprintJson(json("{\"sku\":\"a\",\"n\":1}"));
  }

  @Test
  void aPolicyThatDoesNotKeepTheValuesStatusIsAnErrorNotASuccess() {
    Idem strict = Idem.builder().name("calls").store(store)
        .policy("orders.unkept", OperationPolicy.builder().keep(KeepPolicy.builder().neverKeep(200).build()).build())
        .build();
    IdempotentCall call = strict.call(RecordKey.of("tenant-1", "orders.unkept", "k-unkept"));

    assertThatThrownBy(() -> call.leased(Codec.utf8(), () -> "v" + runs.incrementAndGet()))
        .isInstanceOf(IdemException.class).hasMessageContaining("does not keep status 200");
    assertThat(store.find(RecordKey.of("tenant-1", "orders.unkept", "k-unkept"))).isEmpty();
  }

  @Test
  void anAttemptBelowOneIsRefused() {
    assertThatThrownBy(() -> call("k-attempt").attempt(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("attempt must be 1 or more");
  }

  @Test
  void aDuplicateGetsTheKeptValueWithoutRunningAgain() {
    IdempotentCall.Result<String> first = call("k1").leased(Codec.utf8(), () -> "receipt-" + runs.incrementAndGet());
    IdempotentCall.Result<String> second = call("k1").leased(Codec.utf8(), () -> "receipt-" + runs.incrementAndGet());

    assertThat(first.value()).isEqualTo("receipt-1");
    assertThat(first.replayed()).isFalse();
    assertThat(second.value()).isEqualTo("receipt-1");
    assertThat(second.replayed()).isTrue();
    assertThat(runs).hasValue(1);
  }

  @Test
  void aNullValueIsKeptAsNoValue() {
    assertThat(call("k-null").leased(Codec.utf8(), () -> {
      runs.incrementAndGet();
      return null;
    }).value()).isNull();
    IdempotentCall.Result<String> replay = call("k-null").leased(Codec.utf8(), () -> "late");
    assertThat(replay.value()).isNull();
    assertThat(replay.replayed()).isTrue();
    assertThat(runs).hasValue(1);
  }

  @Test
  void anotherFingerprintWithTheSameKeyIsAMismatch() {
    call("k2").leased(Codec.utf8(), () -> "v");
    IdempotentCall other = idem.call(RecordKey.of("tenant-1", "orders.place", "k2"))
        .fingerprintJson(json("{\"sku\":\"a\",\"n\":2}"));

    assertThatThrownBy(() -> other.leased(Codec.utf8(), () -> "w"))
        .isInstanceOf(PayloadMismatchException.class).hasMessageContaining("n");
    // the same key in another scope is another record
    assertThat(idem.call(RecordKey.of("tenant-2", "orders.place", "k2")).leased(Codec.utf8(), () -> "w").value())
        .isEqualTo("w");
  }

  @Test
  void aTransientFailureFreesTheKey() {
    assertThatThrownBy(() -> call("k3").leased(Codec.utf8(), () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("database away");
    })).isInstanceOf(IllegalStateException.class).hasMessage("database away");
    assertThat(store.find(RecordKey.of("tenant-1", "orders.place", "k3"))).isEmpty();

    assertThat(call("k3").leased(Codec.utf8(), () -> "after " + runs.incrementAndGet()).value())
        .isEqualTo("after 2");
  }

  @Test
  void aCheckedFailureIsWrappedAndFreesTheKey() {
    assertThatThrownBy(() -> call("k4").leased(Codec.utf8(), () -> {
      throw new IOException("socket closed");
    })).isInstanceOf(WorkFailedException.class).hasCauseInstanceOf(IOException.class);
    assertThat(call("k4").leased(Codec.utf8(), () -> "ran").value()).isEqualTo("ran");
  }

  @Test
  void aDeterministicFailureIsKeptAndReplayedAsATypedException() {
    IdempotentCall kept = call("k5").keepFailures(e -> e instanceof OutOfStockException,
        e -> json("{\"sku\":\"a\"}"));

    assertThatThrownBy(() -> kept.leased(Codec.utf8(), () -> {
      runs.incrementAndGet();
      throw new OutOfStockException("sku a is out of stock");
    })).isInstanceOf(OutOfStockException.class);
    assertThatThrownBy(() -> kept.leased(Codec.utf8(), () -> "v" + runs.incrementAndGet()))
        .isInstanceOfSatisfying(ReplayedFailureException.class, e -> {
          assertThat(e.exceptionType()).isEqualTo(OutOfStockException.class.getName());
          assertThat(e.isOf(OutOfStockException.class)).isTrue();
          assertThat(e.exceptionMessage()).isEqualTo("sku a is out of stock");
          assertThat(e.payload(Codec.utf8())).isEqualTo("{\"sku\":\"a\"}");
          assertThat(e.key()).isEqualTo(RecordKey.of("tenant-1", "orders.place", "k5"));
        });
    assertThat(runs).hasValue(1);
  }

  @Test
  void aFailureTheCallerDidNotDeclareIsNotKept() {
    IdempotentCall kept = call("k6").keepFailures(e -> e instanceof OutOfStockException);
    assertThatThrownBy(() -> kept.leased(Codec.utf8(), () -> {
      throw new IllegalArgumentException("bad");
    })).isInstanceOf(IllegalArgumentException.class);
    assertThat(kept.leased(Codec.utf8(), () -> "ok").value()).isEqualTo("ok");
  }

  @Test
  void aLeasedDeterministicFailureIsKeptToo() {
    IdempotentCall kept = call("k7").keepFailures(e -> e instanceof OutOfStockException);
    assertThatThrownBy(() -> kept.leased(Codec.utf8(), () -> {
      throw new OutOfStockException("none left");
    })).isInstanceOf(OutOfStockException.class);
    assertThatThrownBy(() -> kept.leased(Codec.utf8(), () -> "v"))
        .isInstanceOf(ReplayedFailureException.class).hasMessageContaining("none left");
  }

  @Test
  void keepFailureAfterTheCallersRollbackKeepsItOrAnswersWithTheEarlierValue() {
    assertThat(call("k8").keepFailure(Codec.utf8(), new OutOfStockException("gone"))).isEmpty();
    assertThatThrownBy(() -> call("k8").leased(Codec.utf8(), () -> "v"))
        .isInstanceOf(ReplayedFailureException.class);

    call("k9").leased(Codec.utf8(), () -> "first");
    assertThat(call("k9").keepFailure(Codec.utf8(), new OutOfStockException("late")))
        .hasValueSatisfying(r -> assertThat(r.value()).isEqualTo("first"));
  }

  @Test
  void anInFlightDuplicateIsRefusedWithTheLeaseLeft() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    Future<String> first = threads.submit(() -> call("k10").leased(Codec.utf8(), () -> {
      started.countDown();
      finish.await(30, TimeUnit.SECONDS);
      return "first";
    }).value());
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();

    assertThatThrownBy(() -> call("k10").leased(Codec.utf8(), () -> "second"))
        .isInstanceOfSatisfying(RequestInProgressException.class,
            e -> assertThat(e.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30)));
    finish.countDown();
    assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("first");
    assertThat(call("k10").leased(Codec.utf8(), () -> "third").value()).isEqualTo("first");
  }

  @Test
  void anInFlightDuplicateWaitsUpToTheBoundThenReplays() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CountDownLatch finished = new CountDownLatch(1);
    // the waiting duplicate's first nap lets the first execution finish and lasts until it has: no timing guesswork
    Sleeper napping = d -> {
      finish.countDown();
      finished.await(30, TimeUnit.SECONDS);
    };
    Idem waiting = Idem.builder().name("waiting").store(store).sleeper(napping)
        .policy("orders.wait", OperationPolicy.builder().waitInFlight(Duration.ofSeconds(20)).build()).build();
    RecordKey key = RecordKey.of("tenant-1", "orders.wait", "k11");
    Future<String> first = threads.submit(() -> {
      String value = waiting.call(key).leased(Codec.utf8(), () -> {
        started.countDown();
        finish.await(30, TimeUnit.SECONDS);
        return "first";
      }).value();
      finished.countDown();
      return value;
    });
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();

    IdempotentCall.Result<String> second = waiting.call(key).leased(Codec.utf8(), () -> "second");
    assertThat(second.value()).isEqualTo("first");
    assertThat(second.replayed()).isTrue();
    assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("first");
  }

  @Test
  void aKeyPastItsTtlButRetainedIsRefusedAsExpired() {
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    OperationPolicy hourLong = OperationPolicy.builder().ttl(Duration.ofHours(1)).lease(Duration.ofSeconds(30))
        .retention(Duration.ofDays(1)).build();
    // two instances on one store, the second two hours later
    Idem then = Idem.builder().name("then").store(store).clock(Clock.fixed(start, ZoneOffset.UTC))
        .policy("orders.ttl", hourLong).build();
    Idem later = Idem.builder().name("later").store(store)
        .clock(Clock.fixed(start.plus(Duration.ofHours(2)), ZoneOffset.UTC)).policy("orders.ttl", hourLong).build();
    RecordKey key = RecordKey.of("tenant-1", "orders.ttl", "k12");
    then.call(key).leased(Codec.utf8(), () -> "v");

    assertThatThrownBy(() -> later.call(key).leased(Codec.utf8(), () -> "again"))
        .isInstanceOf(KeyExpiredException.class);
  }

  @Test
  void keptValuesAreSealedAtRestUnderTheInstancesEncryption() {
    Idem sealed = Idem.builder().name("sealed").store(store).encryption(Encryption.with(Keyring.generate("k1")))
        .build();
    RecordKey key = RecordKey.of("tenant-1", "orders.sealed", "k13");
    String secret = "card 4111-1111-1111-1111";

    assertThat(sealed.call(key).leased(Codec.utf8(), () -> secret).value()).isEqualTo(secret);
    IdempotencyRecord raw = store.find(key).orElseThrow();
    assertThat(raw.response().bodyAsString()).doesNotContain("4111");
    assertThat(new String(raw.response().body(), StandardCharsets.ISO_8859_1)).doesNotContain("4111");
    IdempotentCall.Result<String> replay = sealed.call(key).leased(Codec.utf8(), () -> "other");
    assertThat(replay.value()).isEqualTo(secret);
    assertThat(replay.replayed()).isTrue();
  }

  @Test
  void aRecordOfAnHttpRouteIsNotReadAsAValue() {
    RecordKey key = RecordKey.of("tenant-1", "POST /orders", "k14");
    Execution e = idem.leased(IdempotentRequest.of(key, new byte[0], "application/json"),
        k -> StoredResponse.json(201, "{}"));
    assertThat(e.outcome()).isEqualTo(Execution.Outcome.STORED);

    assertThatThrownBy(() -> idem.call(key).leased(Codec.utf8(), () -> "v"))
        .isInstanceOf(IdemException.class).hasMessageContaining("status 201");
  }

  @Test
  void bytesSurviveTheTripUnchanged() {
    byte[] value = {0, 1, 2, (byte) 0xff};
    call("k15").leased(Codec.bytes(), () -> value);
    assertThat(call("k15").leased(Codec.bytes(), () -> new byte[] {9}).value()).containsExactly(value);
  }
}
