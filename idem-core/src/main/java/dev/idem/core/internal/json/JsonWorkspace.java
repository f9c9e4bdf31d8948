package dev.idem.core.internal.json;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The reusable buffers of one canonicalisation (tape, output sink, writer, SHA-256 digest), cached per thread so that
 * fingerprinting a request allocates little beyond its result. A workspace that grew past {@link #RETAIN_LIMIT} is
 * not kept, so one huge body does not pin memory to a pooled thread. Use as
 * {@code try (JsonWorkspace w = JsonWorkspace.acquire()) { ... }}; not thread-safe itself.
 */
public final class JsonWorkspace implements AutoCloseable {
  /** Largest footprint, in bytes, that a thread keeps between calls. */
  static final long RETAIN_LIMIT = 1L << 20;

  private static final ThreadLocal<JsonWorkspace> CACHE = new ThreadLocal<>();
  private static final byte[] EMPTY = new byte[0];

  public final JsonTape tape = new JsonTape();
  public final ByteSink sink = new ByteSink(1024);
  public final CanonicalWriter writer = new CanonicalWriter();
  private MessageDigest sha256;
  private boolean cached;

  private JsonWorkspace() {}

  /** The calling thread's workspace, or a fresh one when it is already in use (re-entrant calls). */
  public static JsonWorkspace acquire() {
    JsonWorkspace w = CACHE.get();
    if (w == null) {
      w = new JsonWorkspace();
    } else {
      CACHE.set(null);
    }
    w.cached = false;
    w.sink.reset();
    return w;
  }

  /** A SHA-256 digest, reset. */
  public MessageDigest sha256() {
    MessageDigest d = sha256;
    if (d == null) {
      try {
        d = MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("the JDK provides no SHA-256, which every Java platform must have", e);
      }
      sha256 = d;
    } else {
      d.reset();
    }
    return d;
  }

  @Override
  public void close() {
    if (cached) {
      return;
    }
    tape.reset(EMPTY);
    if (sink.capacity() + tape.footprint() <= RETAIN_LIMIT && CACHE.get() == null) {
      cached = true;
      CACHE.set(this);
    }
  }
}
