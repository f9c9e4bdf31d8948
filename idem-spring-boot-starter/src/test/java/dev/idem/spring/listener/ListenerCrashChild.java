package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.ChildJvm;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The child JVM of the crash tests: runs {@link ListenersApp} until the transaction of message {@code args[0]}
 * commits, prints {@link ListenersApp#COMMITTED} and waits there, before the container acknowledges the message or
 * commits its offset, to be killed with SIGKILL. Arguments: the message id, then the application's arguments.
 */
public final class ListenerCrashChild {
  private static final int SIGKILL_EXIT_CODE = 128 + 9;

  private ListenerCrashChild() {}

  /**
   * Runs the application with {@code arguments} in a child JVM until the transaction of message {@code id} commits,
   * then kills it with SIGKILL.
   */
  static void killAfterTheCommitOf(String id, List<String> arguments) throws Exception {
    List<String> args = new ArrayList<>(List.of(id));
    args.addAll(arguments);
    try (ChildJvm child = ChildJvm.start(ListenerCrashChild.class, args)) {
      assertThat(child.awaitLine(ListenersApp.COMMITTED, ChildJvm.READY_TIMEOUT))
          .isEqualTo(ListenersApp.COMMITTED + " " + id);
      assertThat(child.kill()).isEqualTo(SIGKILL_EXIT_CODE);
    }
  }

  public static void main(String[] args) {
    try {
      System.setProperty("listeners.crash-id", args[0]);
      List<String> app = Arrays.asList(args).subList(1, args.length);
      ListenersContract.run(app);
    } catch (Throwable t) {
      t.printStackTrace();
      System.err.flush();
      Runtime.getRuntime().halt(1);
    }
  }
}
