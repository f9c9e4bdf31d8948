package dev.idem.spring.method.app;

import java.io.IOException;

/** The child's side of the kill -9 handshake: announce the crash point, then wait there to be killed. */
public final class CrashPoint {
  /** The prefix of the line the child prints at its crash point. */
  public static final String READY = "READY";

  private CrashPoint() {}

  /**
   * Prints {@code READY <where>} and blocks on stdin until the parent kills this JVM; if stdin ends (the parent
   * died), halts at once, so that an orphan never commits what the test expects to be lost.
   */
  static void reached(String where) {
    System.out.println(READY + " " + where);
    System.out.flush();
    try {
      System.in.read();
    } catch (IOException ignored) {
      // halting below either way
    }
    Runtime.getRuntime().halt(3);
  }
}
