package dev.idem.spring.listener;

import java.util.Arrays;
import java.util.List;

/**
 * The child JVM of the crash tests: runs {@link ListenersApp} until the transaction of message {@code args[0]}
 * commits, prints {@link ListenersApp#COMMITTED} and waits there, before the container acknowledges the message or
 * commits its offset, to be killed with SIGKILL. Arguments: the message id, then the application's arguments.
 */
public final class ListenerCrashChild {
  private ListenerCrashChild() {}

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
