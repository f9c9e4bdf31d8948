package dev.idem.console.internal;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;

/**
 * Routes {@code /api/outbox/**} to {@link OutboxRoutes}. A class of its own so that the servlet names no outbox type
 * and loads without idem-outbox.
 */
public final class OutboxApi {
  private OutboxApi() {}

  /** Whether {@code method} on {@code path} (after {@code /api/outbox}) is an action rather than a view. */
  public static boolean isAction(String method) {
    return method.equals("POST");
  }

  /** The route's method: GET for views, POST for actions, or null for no such route. */
  public static String method(String path) {
    if (path.isEmpty() || path.equals("/stats")) {
      return "GET";
    }
    if (path.equals("/replay") || path.endsWith("/replay") || path.endsWith("/discard")) {
      return path.chars().filter(c -> c == '/').count() <= 2 ? "POST" : null;
    }
    return path.chars().filter(c -> c == '/').count() == 1 ? "GET" : null;
  }

  /** The audit's name of an action route. */
  public static String action(String path) {
    if (path.equals("/replay")) {
      return "outbox.replay_all";
    }
    return path.endsWith("/replay") ? "outbox.replay" : "outbox.discard";
  }

  /** The audit's target of an action route: the event id, or the filter of a bulk replay. */
  public static String target(String path, HttpServletRequest request) {
    if (path.equals("/replay")) {
      return "status=" + request.getParameter("status") + (request.getParameter("type") == null ? ""
          : " type=" + request.getParameter("type"));
    }
    String id = id(path, path.endsWith("/replay") ? "/replay" : "/discard");
    return id.isEmpty() ? "(no event id)" : id;
  }

  /** Answers the route (whose method {@link #method} checked). */
  public static Map<String, Object> handle(Object routes, String path, HttpServletRequest request) {
    OutboxRoutes outbox = (OutboxRoutes) routes;
    if (path.isEmpty()) {
      return outbox.list(request);
    }
    if (path.equals("/stats")) {
      return outbox.stats();
    }
    if (path.equals("/replay")) {
      return outbox.replayAll(request);
    }
    if (path.endsWith("/replay")) {
      return outbox.replay(id(path, "/replay"));
    }
    if (path.endsWith("/discard")) {
      return outbox.discard(id(path, "/discard"));
    }
    return outbox.get(path.substring(1));
  }

  /**
   * The event id of an action's path ({@code /{id}/replay}, {@code /{id}/discard}): empty when the path names none
   * ({@code /discard}, {@code //replay}), which no event has.
   */
  private static String id(String path, String suffix) {
    return path.length() <= suffix.length() ? "" : path.substring(1, path.length() - suffix.length());
  }
}
