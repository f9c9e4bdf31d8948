package dev.idem.core.internal.json;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte buffer that canonical JSON is written into. Callers may read {@link #array()} up to
 * {@link #size()} directly (for example to feed a {@code MessageDigest}) and may {@link #truncate(int)} to retract
 * output. Not thread-safe.
 */
public final class ByteSink {
  private byte[] buf;
  private int size;

  public ByteSink(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  public void write(int b) {
    if (size == buf.length) {
      grow(1);
    }
    buf[size++] = (byte) b;
  }

  public void write(byte[] src, int off, int len) {
    ensure(len);
    System.arraycopy(src, off, buf, size, len);
    size += len;
  }

  /** Appends an ASCII string; characters above U+007F are not expected here. */
  public void writeAscii(String s) {
    int len = s.length();
    ensure(len);
    for (int i = 0; i < len; i++) {
      buf[size + i] = (byte) s.charAt(i);
    }
    size += len;
  }

  /** Makes room for {@code n} more bytes without changing the size. */
  public void ensure(int n) {
    if (buf.length - size < n) {
      grow(n);
    }
  }

  private void grow(int needed) {
    long wanted = Math.max((long) buf.length * 2, (long) size + needed);
    if (wanted > Integer.MAX_VALUE - 16) {
      if ((long) size + needed > Integer.MAX_VALUE - 16) {
        throw new IllegalStateException("canonical JSON would exceed " + (Integer.MAX_VALUE - 16) + " bytes");
      }
      wanted = Integer.MAX_VALUE - 16;
    }
    buf = Arrays.copyOf(buf, (int) wanted);
  }

  /** The backing array; valid bytes are {@code [0, size())}. The array changes when the sink grows. */
  public byte[] array() {
    return buf;
  }

  public int size() {
    return size;
  }

  /** Sets the size; used by writers that need to write into {@link #array()} directly after {@link #ensure}. */
  void setSize(int newSize) {
    size = newSize;
  }

  /** Drops everything written after {@code mark} (a value previously returned by {@link #size()}). */
  public void truncate(int mark) {
    size = mark;
  }

  public void reset() {
    size = 0;
  }

  /** Current capacity; lets a cache decide whether to keep this sink. */
  public int capacity() {
    return buf.length;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }

  @Override
  public String toString() {
    return new String(buf, 0, size, StandardCharsets.UTF_8);
  }
}
