package dev.idem.spring.logging;

import java.util.Arrays;
import org.slf4j.MDC;

/**
 * The MDC keys Idem's log lines carry (docs/OPERATIONS.md), and a frame that sets some of them for one line or one
 * request and then puts back what was there before. Never a body, a header other than the key and the attempt, a
 * stored response or a credential.
 */
public final class IdemMdc {
  /** The client's {@code Idempotency-Key}. */
  public static final String IDEMPOTENCY_KEY = "idempotency_key";
  /** Who owns the key: the tenant or principal. */
  public static final String SCOPE = "scope";
  /** What the key is for: {@code POST /payments}, or a message type. */
  public static final String OPERATION = "operation";
  /** The client's attempt number, from the {@code Idempotency-Attempt} header. */
  public static final String ATTEMPT = "attempt";
  /** The state a record left ({@code ABSENT} for none). */
  public static final String FROM_STATE = "from_state";
  /** The state a record entered ({@code ABSENT} when it was released). */
  public static final String TO_STATE = "to_state";
  /** The problem code of the answer ({@code CONFLICT.idempotency.payload_mismatch}, ...). */
  public static final String ERROR_CODE = "error_code";

  private IdemMdc() {}

  /**
   * Sets {@code keysAndValues} (key, value, key, value...) in the calling thread's MDC; a null value removes the
   * key. Close the frame to restore the previous values. The frame belongs to the calling thread: used from any other
   * thread, or once closed, it does nothing.
   */
  static Frame set(String... keysAndValues) {
    return new Frame(keysAndValues);
  }

  /**
   * The MDC values a {@link #set} replaced, put back by {@link #close()}. It belongs to the thread that opened it:
   * {@link #put} and {@link #close()} called from another thread, or after the frame was closed, change nothing, so
   * that a value can never be left behind in a pooled thread's MDC (such as by a response written during a servlet
   * async dispatch, on whichever thread runs it).
   */
  static final class Frame implements AutoCloseable {
    private final Thread owner = Thread.currentThread();
    private final String[] keys;
    private final String[] previous;
    private boolean open = true;

    private Frame(String[] keysAndValues) {
      if (keysAndValues.length % 2 != 0) {
        throw new IllegalArgumentException("keys and values come in pairs: " + Arrays.toString(keysAndValues));
      }
      int n = keysAndValues.length / 2;
      keys = new String[n];
      previous = new String[n];
      for (int i = 0; i < n; i++) {
        keys[i] = keysAndValues[2 * i];
        previous[i] = MDC.get(keys[i]);
        put(keys[i], keysAndValues[2 * i + 1]);
      }
    }

    /**
     * Sets (or, for null, removes) a key while the frame is open, for a value learned later; {@link #close()}
     * restores it only when it is one of the frame's keys. Does nothing on another thread than the frame's or once
     * the frame is closed.
     */
    void put(String key, String value) {
      if (Thread.currentThread() != owner || !open) {
        return;
      }
      if (value == null) {
        MDC.remove(key);
      } else {
        MDC.put(key, value);
      }
    }

    /** Puts back the values the frame replaced; only the first call on the frame's thread does anything. */
    @Override
    public void close() {
      if (Thread.currentThread() != owner || !open) {
        return;
      }
      for (int i = keys.length - 1; i >= 0; i--) {
        put(keys[i], previous[i]);
      }
      open = false;
    }
  }
}
