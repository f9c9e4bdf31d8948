package dev.idem.client;

import dev.idem.core.protocol.IdemHeaders;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * The final answer to an intent: status, headers and body of the last attempt, the key the intent was sent with, and
 * the attempt log. Immutable.
 */
public final class Response {
  private final int status;
  private final HttpHeaders headers;
  private final byte[] body;
  private final String key;
  private final String problemCode;
  private final List<Attempt> attempts;

  Response(int status, HttpHeaders headers, byte[] body, String key, String problemCode, List<Attempt> attempts) {
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.key = key;
    this.problemCode = problemCode;
    this.attempts = List.copyOf(attempts);
  }

  public int status() {
    return status;
  }

  public HttpHeaders headers() {
    return headers;
  }

  /** A copy of the body. */
  public byte[] body() {
    return body.clone();
  }

  /** The body decoded as UTF-8. */
  public String bodyText() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The idempotency key every attempt carried; empty for safe methods and intents sent without a key. */
  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  /** The {@code code} of an {@code application/problem+json} body, if there was one. */
  public Optional<String> problemCode() {
    return Optional.ofNullable(problemCode);
  }

  /** Whether the server says this answer was replayed from its store ({@code Idempotency-Status: replayed}). */
  public boolean isReplayed() {
    return replayed(headers);
  }

  static boolean replayed(HttpHeaders headers) {
    return headers.firstValue(IdemHeaders.IDEMPOTENCY_STATUS).map("replayed"::equalsIgnoreCase).orElse(false)
        || headers.firstValue(IdemHeaders.IDEMPOTENT_REPLAYED).map("true"::equalsIgnoreCase).orElse(false);
  }

  /** The attempt log, first attempt first. */
  public List<Attempt> attempts() {
    return attempts;
  }

  @Override
  public String toString() {
    return "Response[" + status + (problemCode != null ? " " + problemCode : "") + ", key " + key + ", "
        + attempts.size() + " attempt" + (attempts.size() == 1 ? "" : "s") + "]";
  }
}
