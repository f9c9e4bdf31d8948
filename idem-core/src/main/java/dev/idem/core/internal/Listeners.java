package dev.idem.core.internal;

import dev.idem.core.AuditEntry;
import dev.idem.core.Execution;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Reconciler;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.spi.IdemListener;
import java.time.Duration;
import java.util.List;

/** Fans events out to several listeners; a listener that throws is skipped, never the execution. */
public final class Listeners implements IdemListener {
  private static final System.Logger LOG = System.getLogger("dev.idem.core.Listeners");

  private final List<IdemListener> listeners;

  private Listeners(List<IdemListener> listeners) {
    this.listeners = listeners;
  }

  public static IdemListener compose(List<IdemListener> listeners) {
    return new Listeners(listeners);
  }

  private void each(java.util.function.Consumer<IdemListener> call) {
    for (IdemListener l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "listener " + l.getClass().getName() + " threw; ignored", e);
      }
    }
  }

  @Override
  public void onExecution(String instance, Execution execution, Duration elapsed) {
    each(l -> l.onExecution(instance, execution, elapsed));
  }

  @Override
  public void onTransition(String instance, RecordKey key, RecordState from, RecordState to, String phase) {
    each(l -> l.onTransition(instance, key, from, to, phase));
  }

  @Override
  public void onReleased(String instance, RecordKey key, Throwable cause) {
    each(l -> l.onReleased(instance, key, cause));
  }

  @Override
  public void onLeaseExpired(String instance, IdempotencyRecord expired) {
    each(l -> l.onLeaseExpired(instance, expired));
  }

  @Override
  public void onCompleterRecovery(String instance, RecordKey key, boolean recovered, Throwable failure) {
    each(l -> l.onCompleterRecovery(instance, key, recovered, failure));
  }

  @Override
  public void onUncertain(String instance, IdempotencyRecord record, Throwable cause) {
    each(l -> l.onUncertain(instance, record, cause));
  }

  @Override
  public void onReconciled(String instance, RecordKey key, Reconciler.Verdict.Result result, boolean applied,
      Throwable failure) {
    each(l -> l.onReconciled(instance, key, result, applied, failure));
  }

  @Override
  public void onResolved(String instance, AuditEntry entry) {
    each(l -> l.onResolved(instance, entry));
  }

  @Override
  public void onStoreCall(String store, String call, long nanos, boolean success) {
    each(l -> l.onStoreCall(store, call, nanos, success));
  }

  @Override
  public void onRecordUnreadable(String store, RecordKey key, DecryptionException failure) {
    each(l -> l.onRecordUnreadable(store, key, failure));
  }
}
