package dev.idem.jdbc.crash;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.jdbc.JdbcIdempotencyStore;

/**
 * The child of the atomic crash tests. Runs {@code idem.atomic} with the business insert, prints
 * {@code READY <rows its transaction sees>} after the insert and before the commit, and waits there to be killed.
 *
 * <p>Arguments: dialect, JDBC URL, user, scope, key.
 */
public final class AtomicCrashChild {
  private AtomicCrashChild() {}

  public static void main(String[] args) {
    ChildSignal.run(args, AtomicCrashChild::crash);
  }

  private static void crash(String[] args) throws Exception {
    CrashDatabase database = CrashDatabase.fromArgs(args, 0);
    IdempotentRequest request =
        CrashScenarios.request(CrashScenarios.ATOMIC_OPERATION, args[3], args[4], CrashScenarios.EFFECT_BODY);
    HikariDataSource ds = database.open("crash-child");
    CrashTables.create(ds, database.dialect());
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(ds).createSchemaIfMissing(true).build();
    Idem idem = Idem.builder().name("crash-child").store(store).build();

    idem.atomic(request, CrashScenarios.insertEffect(request,
        rowsSeen -> ChildSignal.reachedCrashPoint(ChildSignal.READY + " " + rowsSeen)));
  }
}
