package dev.idem.examples.payments.web;

import dev.idem.servlet.Problem;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;

/**
 * Tomcat's error report, as a problem document instead of its HTML page: what the container refuses before any
 * route sees it (a {@code %2f} in the path, a header line it cannot parse, a bad request line) gets
 * {@code application/problem+json} with the status Tomcat chose ({@link ProblemErrorController#problemForStatus}),
 * except that a transfer coding or protocol version it does not take (501, 505) is answered as the client's error,
 * 400 {@code VALIDATION.request}.
 * Installed on the host by {@link WebConfiguration} in place of Spring Boot's own valve; errors inside the
 * application still go to {@link ProblemErrorController}. Thread-safe.
 */
public final class ProblemErrorReportValve extends ErrorReportValve {

  /** A valve that never shows the server's version or a stack trace, and writes problem documents. */
  public ProblemErrorReportValve() {
    setShowReport(false);
    setShowServerInfo(false);
  }

  @Override
  protected void report(Request request, Response response, Throwable throwable) {
    int status = response.getStatus();
    if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
      return;
    }
    AtomicBoolean ioAllowed = new AtomicBoolean();
    response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
    if (!ioAllowed.get()) {
      return;
    }
    Problem problem;
    if (status == 501 || status == 505) {
      // a transfer coding or protocol version Tomcat does not take: the client's request, not the server, is at fault
      problem = Problem.of(PaymentsProblems.INVALID_REQUEST).withDetail(status == 501
          ? "the request's Transfer-Encoding is not supported; send the body with Content-Length or chunked"
          : "the request's protocol version is not supported; use HTTP/1.1");
    } else if (status == 400) {
      problem = Problem.of(PaymentsProblems.INVALID_REQUEST)
          .withDetail("the request's line, headers or path could not be parsed");
    } else {
      problem = ProblemErrorController.problemForStatus(status);
    }
    try {
      response.resetBuffer();
      problem.write(response);
      response.finishResponse();
    } catch (IOException | IllegalStateException e) {
      // the client is gone, or the answer was committed after all: nothing more to say
    }
  }
}
