package dev.idem.console;

import jakarta.servlet.http.HttpServletRequest;

/** {@link ConsoleAuthorizer#refuseAll()}: the authorizer of a console nobody configured. */
final class RefuseAll implements ConsoleAuthorizer {
  static final RefuseAll INSTANCE = new RefuseAll();

  /** Says what to do, in the terms of both ways to mount the console. */
  static final String DETAIL = "the console refuses everyone until it is given a ConsoleAuthorizer: pass one to"
      + " ConsoleServlet.builder(...).authorizer(...), or, with the Spring Boot starter, define a ConsoleAuthorizer"
      + " bean (the idem.console.* properties set the rest; see docs/console.md)";

  private RefuseAll() {}

  @Override
  public Decision authorize(HttpServletRequest request) {
    return Decision.forbidden(DETAIL);
  }

  @Override
  public String toString() {
    return "ConsoleAuthorizer.refuseAll()";
  }
}
