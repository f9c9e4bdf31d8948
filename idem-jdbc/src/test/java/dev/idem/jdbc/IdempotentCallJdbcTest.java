package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Codec;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentCall;
import dev.idem.core.RecordKey;
import dev.idem.core.ReplayedFailureException;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The typed call API in atomic mode on H2, PostgreSQL and MariaDB: the value and the effect commit together. */
class IdempotentCallJdbcTest {
  private final String scope = "call-" + UUID.randomUUID();

  static final class RejectedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RejectedException(String message) {
      super(message);
    }
  }

  private static IdempotentCall call(Idem idem, String scope, String key) {
    return idem.call(RecordKey.of(scope, "orders.place", key))
        .fingerprintJson("{\"sku\":\"a\"}".getBytes(StandardCharsets.UTF_8))
        .keepFailures(e -> e instanceof RejectedException);
  }

  private final AtomicInteger runs = new AtomicInteger();

  private String effect(Connection c, String key) throws Exception {
    runs.incrementAndGet();
    Databases.insertEffect(c, scope + "/" + key);
    return "receipt " + key;
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void aFirstAttemptSkipsTheLookUpAndALaterAttemptReplaysWithoutRunningTheWork(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("attempts").store(Databases.store(dialect)).build();

    IdempotentCall.Result<String> first = call(idem, scope, "k-attempt").attempt(1)
        .atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class), "k-attempt"));
    IdempotentCall.Result<String> again = call(idem, scope, "k-attempt").attempt(1)
        .atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class), "k-attempt"));
    int afterFirstAttempts = runs.get();
    IdempotentCall.Result<String> retry = call(idem, scope, "k-attempt").attempt(2)
        .atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class), "k-attempt"));

    assertThat(first.replayed()).isFalse();
    assertThat(again.replayed()).isTrue();
    assertThat(retry.replayed()).isTrue();
    assertThat(again.value()).isEqualTo(first.value());
    assertThat(retry.value()).isEqualTo(first.value());
    assertThat(afterFirstAttempts).as("a first attempt skips the look-up: its work ran, then rolled back").isEqualTo(2);
    assertThat(runs).as("a later attempt looks the record up first").hasValue(2);
    assertThat(Databases.countEffects(dialect, scope + "/k-attempt")).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void theValueAndTheEffectCommitTogetherAndADuplicateReplays(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("calls").store(Databases.store(dialect)).build();

    IdempotentCall.Result<String> first =
        call(idem, scope, "k1").atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class), "k1"));
    IdempotentCall.Result<String> second =
        call(idem, scope, "k1").atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class), "k1"));

    assertThat(first.value()).isEqualTo("receipt k1");
    assertThat(second.value()).isEqualTo("receipt k1");
    assertThat(second.replayed()).isTrue();
    assertThat(Databases.countEffects(dialect, scope + "/k1")).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void sixteenConcurrentCallsPerKeyGiveOneEffectAndOneValue(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("race").store(Databases.store(dialect)).build();
    int threads = 16;
    int rounds = 40;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < rounds; round++) {
        String key = "race-" + round;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<IdempotentCall.Result<String>>> answers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          answers.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return call(idem, scope, key).atomic(Codec.utf8(),
                tx -> effect(tx.unwrap(Connection.class), key) + " by " + Thread.currentThread().getName());
          }));
        }
        Set<String> values = new HashSet<>();
        int replays = 0;
        for (Future<IdempotentCall.Result<String>> answer : answers) {
          IdempotentCall.Result<String> result = answer.get(60, TimeUnit.SECONDS);
          values.add(result.value());
          replays += result.replayed() ? 1 : 0;
        }
        assertThat(values).as("round %d: every caller gets the one kept value", round).hasSize(1);
        assertThat(replays).as("round %d: one execution, every other caller a replay", round).isEqualTo(threads - 1);
        assertThat(Databases.countEffects(dialect, scope + "/" + key)).as("round %d", round).isEqualTo(1);
      }
      // duplicates that ran the work (a lost race, rolled back) are counted, never kept: at least one run per round
      assertThat(runs.get()).isGreaterThanOrEqualTo(rounds);
    } finally {
      pool.shutdownNow();
    }
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void aDeterministicFailureIsKeptWithoutTheWorksWrites(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("failures").store(Databases.store(dialect)).build();

    assertThatThrownBy(() -> call(idem, scope, "k2").atomic(Codec.utf8(), tx -> {
      effect(tx.unwrap(Connection.class), "k2");
      throw new RejectedException("limit exceeded");
    })).isInstanceOf(RejectedException.class);
    assertThatThrownBy(() -> call(idem, scope, "k2").atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class),
        "k2"))).isInstanceOf(ReplayedFailureException.class).hasMessageContaining("limit exceeded");

    assertThat(Databases.countEffects(dialect, scope + "/k2")).isZero();
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void aTransientFailureRollsTheEffectBackAndFreesTheKey(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("transient").store(Databases.store(dialect)).build();

    assertThatThrownBy(() -> call(idem, scope, "k3").atomic(Codec.utf8(), tx -> {
      effect(tx.unwrap(Connection.class), "k3");
      throw new IllegalStateException("downstream timeout");
    })).isInstanceOf(IllegalStateException.class);
    assertThat(Databases.countEffects(dialect, scope + "/k3")).isZero();

    assertThat(call(idem, scope, "k3").atomic(Codec.utf8(), tx -> effect(tx.unwrap(Connection.class), "k3"))
        .replayed()).isFalse();
    assertThat(Databases.countEffects(dialect, scope + "/k3")).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void aCallJoinsTheCallersTransactionAndItsRollbackLeavesNeither(JdbcDialect dialect) throws Exception {
    JdbcIdempotencyStore store = Databases.store(dialect);
    Idem idem = Idem.builder().name("joined").store(store).build();
    try (Connection c = Databases.pool(dialect).getConnection()) {
      c.setAutoCommit(false);
      try (JdbcIdempotencyStore.Binding binding = store.useConnection(c)) {
        String value = call(idem, scope, "k4").atomic(Codec.utf8(), tx -> {
          assertThat(tx.unwrap(Connection.class)).isSameAs(c);
          return effect(c, "k4");
        }).value();
        assertThat(value).isEqualTo("receipt k4");
        c.rollback();
      } finally {
        c.setAutoCommit(true);
      }
    }
    assertThat(Databases.countEffects(dialect, scope + "/k4")).isZero();
    assertThat(store.find(RecordKey.of(scope, "orders.place", "k4"))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(value = JdbcDialect.class, names = "POSTGRESQL")
  void keptValuesAreSealedInTheTable(JdbcDialect dialect) throws Exception {
    JdbcIdempotencyStore store = Databases.store(dialect);
    Idem sealed = Idem.builder().name("sealed").store(store).encryption(Encryption.with(Keyring.generate("k1")))
        .build();

    call(sealed, scope, "k5").atomic(Codec.utf8(), tx -> "iban DE89370400440532013000");

    assertThat(store.find(RecordKey.of(scope, "orders.place", "k5")).orElseThrow().response().bodyAsString())
        .doesNotContain("DE89");
    assertThat(call(sealed, scope, "k5").atomic(Codec.utf8(), tx -> "other").value())
        .isEqualTo("iban DE89370400440532013000");
  }
}
