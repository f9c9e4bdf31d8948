package dev.idem.examples.payments.web;

import dev.idem.core.LeaseLostException;
import dev.idem.core.StoreException;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.ErrorResponse;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * Turns every exception a handler throws into an RFC 9457 problem: the service's own {@link ApiProblem}s, Spring
 * MVC's client errors (unknown route, wrong method, unreadable body) as 4xx with a {@code VALIDATION.*} or
 * {@code NOT_FOUND.*} code, an unavailable database as a retryable 503, a kept answer that cannot be opened as the
 * non-retryable 500 {@code INTERNAL.record_unreadable}, and anything else as a retryable 500.
 */
@RestControllerAdvice
public class ProblemAdvice {
  private static final Logger LOG = LoggerFactory.getLogger(ProblemAdvice.class);

  @ExceptionHandler(Exception.class)
  public void handle(Exception e, HttpServletResponse response) throws IOException {
    Problem problem = problemFor(e);
    if (problem.status() >= 500 && !(e instanceof ApiProblem)) {
      LOG.error("answering {}: {}", problem, e.toString(), e);
    }
    ProblemResponse.send(response, problem);
  }

  /** The problem for an exception thrown while handling a request. */
  public static Problem problemFor(Throwable e) {
    if (e instanceof ApiProblem) {
      return ((ApiProblem) e).problem();
    }
    if (e instanceof NoResourceFoundException || e instanceof NoHandlerFoundException) {
      return Problem.of(PaymentsProblems.ROUTE_NOT_FOUND).withDetail("no such resource");
    }
    if (e instanceof HttpRequestMethodNotSupportedException) {
      return Problem.of(ProblemCode.METHOD_NOT_ALLOWED)
          .withDetail(((HttpRequestMethodNotSupportedException) e).getMethod() + " is not supported here");
    }
    if (e instanceof HttpMediaTypeNotSupportedException) {
      return Problem.of(ProblemCode.MEDIA_TYPE)
          .withDetail("send the body as JSON with Content-Type: application/json");
    }
    if (e instanceof HttpMediaTypeNotAcceptableException) {
      return Problem.of(PaymentsProblems.NOT_ACCEPTABLE)
          .withDetail("this resource answers with application/json or application/problem+json");
    }
    if (e instanceof HttpMessageNotReadableException) {
      return Problem.of(PaymentsProblems.UNREADABLE_BODY).withDetail("the request body could not be read");
    }
    if (e instanceof MissingServletRequestParameterException) {
      String name = ((MissingServletRequestParameterException) e).getParameterName();
      return Problem.of(400, "VALIDATION." + name, "Invalid request").withDetail(name + " is required");
    }
    if (e instanceof MethodArgumentTypeMismatchException) {
      String name = ((MethodArgumentTypeMismatchException) e).getName();
      return Problem.of(400, "VALIDATION." + name, "Invalid request").withDetail(name + " has the wrong type");
    }
    if (e instanceof ErrorResponse) {
      int status = ((ErrorResponse) e).getStatusCode().value();
      if (status >= 400 && status < 500) {
        return Problem.of(PaymentsProblems.INVALID_REQUEST).withStatus(status).withDetail(e.getMessage());
      }
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof DecryptionException) {
        return Problem.of(ProblemCode.RECORD_UNREADABLE).withDetail("the answer kept for this Idempotency-Key"
            + " cannot be read; nothing was run again. Do not retry with this key: ask the operator of this service");
      }
      if (t instanceof LeaseLostException) {
        return Problem.of(ProblemCode.IN_PROGRESS)
            .withDetail("another worker took this request over; retry with the same key");
      }
      if (t instanceof StoreException || t instanceof SQLTransientException
          || t instanceof TransientDataAccessException
          || t instanceof SQLException && isConnectionFailure((SQLException) t)) {
        return Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE).withTitle("Database unavailable")
            .withDetail("the database could not be reached; retry with the same key");
      }
    }
    return Problem.of(PaymentsProblems.INTERNAL_ERROR)
        .withDetail("the request failed unexpectedly; retry with the same key");
  }

  private static boolean isConnectionFailure(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("08") || state.startsWith("57P") || state.equals("40001")
        || state.equals("40P01") || state.equals("HYT00"));
  }
}
