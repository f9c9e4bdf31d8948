package dev.idem.examples.payments.web;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Answers the container's error dispatches (errors raised outside Spring MVC's handlers, such as a filter's
 * exception or Tomcat refusing a request) with a problem document instead of Spring Boot's default error page.
 */
@RestController
public class ProblemErrorController implements ErrorController {

  @RequestMapping("${server.error.path:/error}")
  public void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
    Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
    int status = code instanceof Integer ? (Integer) code : 500;
    Object exception = request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
    Object guarded = request.getAttribute(RequestBodyGuard.PROBLEM);
    Problem problem;
    if (guarded instanceof Problem) {
      problem = (Problem) guarded;
    } else if (exception instanceof Throwable) {
      problem = ProblemAdvice.problemFor((Throwable) exception);
    } else {
      problem = problemForStatus(status);
    }
    ProblemResponse.send(response, problem);
  }

  /** The problem for an error the container or the framework gave only a status for. */
  static Problem problemForStatus(int status) {
    Problem problem;
    if (status == 404) {
      problem = Problem.of(PaymentsProblems.ROUTE_NOT_FOUND).withDetail("no such resource");
    } else if (status == 413) {
      problem = Problem.of(ProblemCode.REQUEST_TOO_LARGE).withTitle("Request too large");
    } else if (status == 408) {
      problem = Problem.of(PaymentsProblems.BODY_TIMEOUT).withDetail("the request did not arrive in time");
    } else if (status >= 400 && status < 500) {
      problem = Problem.of(PaymentsProblems.INVALID_REQUEST).withStatus(status);
    } else if (status == 503) {
      problem = Problem.of(PaymentsProblems.OVERLOADED).withDetail("the service is not taking requests now");
    } else {
      problem = Problem.of(PaymentsProblems.INTERNAL_ERROR)
          .withDetail("the request failed unexpectedly; retry with the same key");
    }
    return problem;
  }
}
