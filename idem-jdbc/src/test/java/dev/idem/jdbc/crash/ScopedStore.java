package dev.idem.jdbc.crash;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.Scope;
import dev.idem.core.spi.IdempotencyStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A view of a store that shows the completer only one scope's lease-expired records; every other call passes through
 * to the real store unchanged (a dynamic proxy, so the view follows the SPI as it grows).
 *
 * <p>The record table is shared with other tests and other runs, and a completer whose clock is ahead takes over every
 * lease-expired {@code POST /payments} record it finds. Without this view the crash test's completer would take over
 * other tests' in-flight records, and a backlog
 * of them could keep this test's record out of its batch.
 */
final class ScopedStore {
  private static final int SCAN = 10_000;

  private ScopedStore() {}

  static IdempotencyStore of(IdempotencyStore delegate, Scope scope) {
    return (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("findLeaseExpired") && args != null && args.length == 3) {
            @SuppressWarnings("unchecked")
            Collection<Operation> operations = (Collection<Operation>) args[1];
            return findLeaseExpired(delegate, scope, (Instant) args[0], operations, (Integer) args[2]);
          }
          if (method.getDeclaringClass() == Object.class) {
            switch (method.getName()) {
              case "equals":
                return proxy == args[0];
              case "hashCode":
                return System.identityHashCode(proxy);
              default:
                return "ScopedStore[" + scope + ", " + delegate + "]";
            }
          }
          try {
            return method.invoke(delegate, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private static List<IdempotencyRecord> findLeaseExpired(IdempotencyStore delegate, Scope scope, Instant now,
      Collection<Operation> operations, int limit) {
    return delegate.findLeaseExpired(now, operations, SCAN).stream()
        .filter(r -> r.key().scope().equals(scope))
        .limit(limit)
        .collect(Collectors.toList());
  }
}
