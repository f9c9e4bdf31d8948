package dev.idem.client.spi;

import dev.idem.client.Intent;
import java.util.List;

/**
 * Where an {@link dev.idem.client.IdempotentHttpClient} keeps unsafe intents between the first send and a final
 * answer, so that a restarted client can finish them with their original keys. Implementations must be thread-safe
 * and durable when {@link #append} returns.
 *
 * <p>An intent handed to {@link #append} always carries its key ({@link Intent#key()} is present) and no secret
 * headers ({@code Authorization}, {@code Cookie}, {@code Proxy-Authorization} are removed by the client): credentials
 * come from the client's configuration at resume time.
 */
public interface PendingJournal extends AutoCloseable {
  /** Keeps nothing: nothing is resumed after a restart. */
  PendingJournal NONE = new PendingJournal() {
    @Override
    public void append(Intent intent) {}

    @Override
    public void complete(String key) {}

    @Override
    public List<Intent> pending() {
      return List.of();
    }

    @Override
    public void close() {}
  };

  /** Records {@code intent} as pending; durable when this returns. Appending a key that is pending again is a no-op. */
  void append(Intent intent);

  /** Records that the intent with {@code key} has a final answer. Unknown keys are ignored. */
  void complete(String key);

  /** The intents appended and not completed, oldest first. */
  List<Intent> pending();

  @Override
  void close();
}
