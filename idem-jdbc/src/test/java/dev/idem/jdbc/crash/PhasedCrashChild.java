package dev.idem.jdbc.crash;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.OperationPolicy;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.time.Duration;

/**
 * The child of the phased crash tests. Runs {@code POST /payments}: the "create" phase commits, the "charge" phase
 * calls the provider (committed there), then the child prints {@code READY <derived key>} before the phase's recovery
 * point is committed and waits there to be killed.
 *
 * <p>Arguments: dialect, JDBC URL, user, scope, key, lease in seconds.
 */
public final class PhasedCrashChild {
  private PhasedCrashChild() {}

  public static void main(String[] args) {
    ChildSignal.run(args, PhasedCrashChild::crash);
  }

  private static void crash(String[] args) throws Exception {
    CrashDatabase database = CrashDatabase.fromArgs(args, 0);
    IdempotentRequest request =
        CrashScenarios.request(CrashScenarios.PAYMENTS, args[3], args[4], CrashScenarios.PAYMENT_BODY);
    Duration lease = Duration.ofSeconds(Long.parseLong(args[5]));
    HikariDataSource ds = database.open("crash-child");
    CrashTables.create(ds, database.dialect());
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(ds).createSchemaIfMissing(true).build();
    Idem idem = Idem.builder().name("crash-child").store(store)
        .policy(CrashScenarios.PAYMENTS, OperationPolicy.builder().lease(lease).build())
        .phased(CrashScenarios.payments(ds, database.dialect(),
            derivedKey -> ChildSignal.reachedCrashPoint(ChildSignal.READY + " " + derivedKey)))
        .build();

    idem.phased(request);
  }
}
