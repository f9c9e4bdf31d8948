package dev.idem.examples.payments.web;

import jakarta.servlet.ServletException;
import java.io.IOException;
import java.util.function.BooleanSupplier;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;

/**
 * Tomcat's side of {@link RequestBodyGuard}:
 * <ul>
 *   <li>It lets the guard see whether body bytes have arrived without blocking: a non-blocking read of the
 *       connection into Tomcat's buffer, which a servlet cannot ask for outside asynchronous mode.
 *   <li>It closes the connection of a request whose body the guard refused, without reading what is left of that
 *       body. Tomcat otherwise drains an unread body before it answers the next request on the connection: at the
 *       sender's pace, on a request thread, which is exactly what a slow client wants.
 * </ul>
 * Installed on the application's context by {@link WebConfiguration}. Thread-safe.
 */
public final class RefusedBodyValve extends ValveBase {

  /** A valve that supports asynchronous requests, as the ones after it may. */
  public RefusedBodyValve() {
    super(true);
  }

  @Override
  public void invoke(Request request, Response response) throws IOException, ServletException {
    request.setAttribute(RequestBodyGuard.READABLE, (BooleanSupplier) () -> {
      request.getCoyoteRequest().action(ActionCode.AVAILABLE, Boolean.TRUE);
      return request.getCoyoteRequest().getAvailable() > 0;
    });
    try {
      getNext().invoke(request, response);
    } finally {
      if (request.getAttribute(RequestBodyGuard.PROBLEM) != null) {
        request.getCoyoteRequest().action(ActionCode.DISABLE_SWALLOW_INPUT, null);
      }
    }
  }
}
