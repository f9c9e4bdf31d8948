package dev.idem.examples.payments.web;

import dev.idem.core.StoredResponse;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Problem documents as answers: written to the response ({@link #send}), or as answers of phased operations, which
 * answer with a {@link StoredResponse}. The idempotency
 * filter sends such an answer (and its replays) and tells the response chain its code, as {@link Problem#write}
 * does, so that the MDC's {@code error_code} carries it.
 */
public final class ProblemResponse {
  private ProblemResponse() {}

  /**
   * Writes {@code problem} as the answer, in place of anything buffered, unless the answer is committed already (then
   * nothing can be said); a 503 also gets {@code Retry-After: 1}.
   */
  public static void send(HttpServletResponse response, Problem problem) throws IOException {
    if (response.isCommitted()) {
      return;
    }
    response.resetBuffer();
    if (problem.status() == 503) {
      response.setHeader(IdemHeaders.RETRY_AFTER, "1");
    }
    problem.write(response);
  }

  /** The problem as a response: its status, {@code Content-Type: application/problem+json} and its JSON. */
  public static StoredResponse of(Problem problem) {
    return StoredResponse.of(problem.status(), Map.of("content-type", List.of(Problem.MEDIA_TYPE)), problem.toJson());
  }

  /** The problem as a response that also tells the client when to retry. */
  public static StoredResponse retryAfter(Problem problem, long seconds) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("content-type", List.of(Problem.MEDIA_TYPE));
    headers.put(IdemHeaders.RETRY_AFTER.toLowerCase(Locale.ROOT), List.of(Long.toString(seconds)));
    return StoredResponse.of(problem.status(), headers, problem.toJson());
  }

  /**
   * The answer to a provider call that failed transiently: 504 {@code DEPENDENCY.timeout} (the call may have been
   * applied) or 503 {@code DEPENDENCY.unavailable}, retryable, with {@code Retry-After: 1}. Not kept, so the retry
   * with the same key resumes the pending resource and re-sends the same provider key.
   *
   * @param resource {@code payment} or {@code refund}; names the problem member {@code <resource>_id}
   * @param applied what the provider would otherwise do twice: {@code charged}, {@code refunded}
   */
  public static StoredResponse providerFailed(boolean timedOut, String resource, String id, String applied) {
    Problem problem = timedOut
        ? Problem.of(ProblemCode.DEPENDENCY_TIMEOUT).withStatus(504).withTitle("Payment provider timeout")
            .withDetail("the payment provider did not answer in time; " + resource + " " + id + " is pending: retry"
                + " with the same Idempotency-Key and it will not be " + applied + " twice")
        : Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE).withTitle("Payment provider unavailable")
            .withDetail("the payment provider is unavailable; " + resource + " " + id + " is pending: retry with the"
                + " same Idempotency-Key");
    return retryAfter(problem.with(resource + "_id", id), 1);
  }
}
