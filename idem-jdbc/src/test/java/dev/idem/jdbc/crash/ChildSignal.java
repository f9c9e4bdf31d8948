package dev.idem.jdbc.crash;

import java.io.IOException;

/** The child's side of the handshake: announce the crash point, then wait there to be killed. */
final class ChildSignal {
  /** The prefix of the line a child prints when it reached its crash point. */
  static final String READY = "READY";

  private ChildSignal() {}

  /**
   * Prints {@code line} (which starts with {@link #READY}) and blocks on stdin until the parent kills this JVM. The
   * child never goes past this point: if stdin ends (the parent died), it halts at once, so that an orphan never
   * commits what a test expects to be lost.
   */
  static void reachedCrashPoint(String line) {
    System.out.println(line);
    System.out.flush();
    try {
      System.in.read();
    } catch (IOException ignored) {
      // halting below either way
    }
    Runtime.getRuntime().halt(3);
  }

  /** Runs a child's main body; any failure before the crash point is reported on stderr and ends the JVM at once. */
  static void run(String[] args, ChildMain main) {
    try {
      main.run(args);
      System.err.println("child returned without reaching its crash point");
    } catch (Throwable t) {
      t.printStackTrace();
    }
    System.err.flush();
    Runtime.getRuntime().halt(1);
  }

  /** A child's main body. */
  @FunctionalInterface
  interface ChildMain {
    void run(String[] args) throws Exception;
  }
}
