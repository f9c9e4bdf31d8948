package dev.idem.examples.payments.web;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

/** The JSON body of a plain (not idempotent) request, read with a size bound. Stateless. */
public final class JsonRequest {
  /** The largest body a plain route reads: 64 KiB. */
  public static final int MAX_BYTES = 64 * 1024;

  private JsonRequest() {}

  /**
   * The body, after checking that it is declared as JSON and is at most {@link #MAX_BYTES}.
   *
   * @throws ApiProblem 415 {@code VALIDATION.media_type} or 413 {@code VALIDATION.request_too_large}
   */
  public static byte[] body(HttpServletRequest request) throws IOException {
    requireJson(request);
    if (request.getContentLengthLong() > MAX_BYTES) {
      throw tooLarge();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    try (InputStream in = request.getInputStream()) {
      int n;
      while ((n = in.read(buffer)) != -1) {
        if (out.size() + n > MAX_BYTES) {
          throw tooLarge();
        }
        out.write(buffer, 0, n);
      }
    }
    return out.toByteArray();
  }

  /**
   * Checks that the request declares a JSON body ({@code application/json} or {@code application/*+json}).
   *
   * @throws ApiProblem 415 {@code VALIDATION.media_type} otherwise
   */
  public static void requireJson(HttpServletRequest request) {
    String type = request.getContentType();
    String base = type == null ? "" : type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    if (!base.equals("application/json") && !(base.startsWith("application/") && base.endsWith("+json"))) {
      throw new ApiProblem(Problem.of(ProblemCode.MEDIA_TYPE)
          .withDetail("send the body as JSON with Content-Type: application/json"
              + (type == null ? "" : "; got " + base)));
    }
  }

  private static ApiProblem tooLarge() {
    return new ApiProblem(Problem.of(ProblemCode.REQUEST_TOO_LARGE)
        .withDetail("the request body is larger than the limit of " + MAX_BYTES + " bytes"));
  }
}
