package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A response larger than the operation's {@code maxResponseBytes} cannot be kept. What became of the request depends
 * on the mode, and this exception says which:
 *
 * <ul>
 *   <li>Nothing was applied ({@link #kept()} and {@link #recoveryPoint()} empty): atomic mode rolled the work back,
 *       or a phased operation's first phase rolled back; the key is free.
 *   <li>The work was applied outside any transaction (leased work, an outside phase of a phased operation), so it
 *       cannot be undone: the record ends {@code FAILED} with {@link #substitute} in place of the answer
 *       ({@link #kept()}), and every replay of the key returns that substitute; the work never runs again.
 *   <li>A phased operation's later transactional phase answered: that phase rolled back, the phases before it stay
 *       committed, and the record stays at its recovery point ({@link #recoveryPoint()}); a retry resumes there.
 * </ul>
 */
public class ResponseTooLargeException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final long size;
  private final int limit;
  private final transient StoredResponse kept;
  private final String recoveryPoint;

  public ResponseTooLargeException(RecordKey key, long size, int limit) {
    this(key, size, limit, null, null);
  }

  /**
   * @param kept the substitute kept in the answer's place (the work was applied), or null
   * @param recoveryPoint the recovery point the record stays at (a phased operation's committed phases), or null
   */
  public ResponseTooLargeException(RecordKey key, long size, int limit, StoredResponse kept, String recoveryPoint) {
    super("response of " + key.operation() + " for key '" + key.key() + "' is " + (size > limit ? size + " bytes"
        : "larger than the limit") + "; the limit is " + limit + " (OperationPolicy.maxResponseBytes)"
        + (kept != null ? "; the work was applied, and a substitute answer is kept in its place"
            : recoveryPoint != null ? "; the answering phase rolled back, the record stays at '" + recoveryPoint
                + "'" : "; nothing was applied"));
    this.size = size;
    this.limit = limit;
    this.kept = kept;
    this.recoveryPoint = recoveryPoint;
  }

  /** The answer's size in bytes, or a value not above {@link #limit} when only its excess is known. */
  public long size() {
    return size;
  }

  /** The operation's {@code maxResponseBytes}. */
  public int limit() {
    return limit;
  }

  /**
   * The substitute kept in place of the answer when the work was applied and cannot be undone (leased mode, an
   * outside phase): every replay of the key returns it. Empty when nothing of the answer's step was applied.
   */
  public Optional<StoredResponse> kept() {
    return Optional.ofNullable(kept);
  }

  /**
   * The recovery point a phased record stays at when its answering phase rolled back after earlier phases
   * committed: their effects stay, and a retry resumes after them. Empty otherwise.
   */
  public Optional<String> recoveryPoint() {
    return Optional.ofNullable(recoveryPoint);
  }

  /**
   * The answer kept in place of one larger than {@code limit} bytes whose work was applied: 500, an RFC 9457 problem
   * {@code INTERNAL.response_too_large}, not retryable, saying that the request was applied and its answer not kept.
   * A few hundred bytes, kept whatever the limit.
   */
  public static StoredResponse substitute(int limit) {
    String json = "{\"type\":\"urn:idem:problem:INTERNAL.response_too_large\",\"title\":\"Response too large to keep\","
        + "\"status\":500,\"detail\":\"the request was applied, but its answer was larger than the " + limit
        + " bytes the server keeps for idempotent requests and was not kept; it is not run again. Do not send it"
        + " again with a new key\",\"code\":\"INTERNAL.response_too_large\",\"retryable\":false,\"applied\":true}";
    return StoredResponse.of(500, Map.of("content-type", List.of("application/problem+json")),
        json.getBytes(StandardCharsets.UTF_8));
  }
}
