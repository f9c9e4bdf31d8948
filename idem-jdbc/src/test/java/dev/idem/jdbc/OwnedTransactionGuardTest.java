package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Codec;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentCall;
import dev.idem.core.RecordKey;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The connection of a transaction the store owns, as atomic-mode work sees it, on H2, PostgreSQL and MariaDB: it
 * refuses to commit, roll back, switch auto-commit on or close (the work's writes and the record commit together or
 * not at all), refuses any use once the work has returned, and passes savepoints through.
 */
class OwnedTransactionGuardTest {
  private final String scope = "guard-" + UUID.randomUUID();

  /** Work that ends the store's transaction itself, in one of the ways the connection refuses. */
  interface Misuse {
    void apply(Connection c) throws SQLException;
  }

  private IdempotentCall call(Idem idem, String key) {
    return idem.call(RecordKey.of(scope, "orders.place", key))
        .fingerprintJson("{\"sku\":\"a\"}".getBytes(StandardCharsets.UTF_8))
        .keepFailures(e -> false);
  }

  static Throwable root(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root;
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void workCannotEndTheStoresTransactionAndARetryThenAppliesItOnce(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("guard").store(Databases.store(dialect)).build();
    Map<String, Misuse> misuses = new LinkedHashMap<>();
    misuses.put("commit()", Connection::commit);
    misuses.put("rollback()", Connection::rollback);
    misuses.put("setAutoCommit(true)", c -> c.setAutoCommit(true));
    misuses.put("close()", Connection::close);
    misuses.put("abort()", c -> c.abort(Runnable::run));

    for (Map.Entry<String, Misuse> misuse : misuses.entrySet()) {
      String key = "k-" + misuse.getKey().replaceAll("\\W", "");
      String marker = scope + "/" + key;

      assertThatThrownBy(() -> call(idem, key).atomic(Codec.utf8(), tx -> {
        Connection c = tx.unwrap(Connection.class);
        Databases.insertEffect(c, marker);
        misuse.getValue().apply(c);
        return "receipt " + key;
      })).as(misuse.getKey()).satisfies(t -> assertThat(root(t)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(misuse.getKey() + " on the connection of a transaction that"));
      assertThat(Databases.countEffects(dialect, marker)).as("effect after %s", misuse.getKey()).isZero();

      // nothing was kept: the retry runs the work, and the effect and the record commit once
      IdempotentCall.Result<String> retry = call(idem, key).atomic(Codec.utf8(), tx -> {
        Databases.insertEffect(JdbcTransaction.connectionOf(tx), marker);
        return "receipt " + key;
      });
      assertThat(retry.replayed()).as("retry after %s", misuse.getKey()).isFalse();
      assertThat(call(idem, key).atomic(Codec.utf8(), tx -> "ran again").value()).isEqualTo("receipt " + key);
      assertThat(Databases.countEffects(dialect, marker)).as("effect after %s", misuse.getKey()).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void theConnectionRefusesUseOnceTheWorkReturnedAndSavepointsPassThrough(JdbcDialect dialect) throws Exception {
    Idem idem = Idem.builder().name("guard").store(Databases.store(dialect)).build();
    AtomicReference<Connection> leaked = new AtomicReference<>();

    String value = call(idem, "k-leak").atomic(Codec.utf8(), tx -> {
      Connection c = tx.unwrap(Connection.class);
      leaked.set(c);
      Savepoint before = c.setSavepoint();
      Databases.insertEffect(c, scope + "/undone");
      c.rollback(before);
      Databases.insertEffect(c, scope + "/kept");
      return "receipt";
    }).value();

    assertThat(value).isEqualTo("receipt");
    assertThat(Databases.countEffects(dialect, scope + "/undone")).isZero();
    assertThat(Databases.countEffects(dialect, scope + "/kept")).isEqualTo(1);
    Connection c = leaked.get();
    assertThat(c.isClosed()).isTrue();
    assertThatThrownBy(() -> c.prepareStatement("SELECT 1")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("has ended");
  }
}
