package dev.idem.examples.payments.web;

import dev.idem.core.StoredResponse;
import dev.idem.servlet.Problem;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Problem documents as answers of phased operations, which answer with a {@link StoredResponse}. */
public final class ProblemResponse {
  private ProblemResponse() {}

  /** The problem as a response: its status, {@code Content-Type: application/problem+json} and its JSON. */
  public static StoredResponse of(Problem problem) {
    return StoredResponse.of(problem.status(), Map.of("content-type", List.of(Problem.MEDIA_TYPE)), problem.toJson());
  }

  /** The problem as a response that also tells the client when to retry. */
  public static StoredResponse retryAfter(Problem problem, long seconds) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("content-type", List.of(Problem.MEDIA_TYPE));
    headers.put("retry-after", List.of(Long.toString(seconds)));
    return StoredResponse.of(problem.status(), headers, problem.toJson());
  }
}
