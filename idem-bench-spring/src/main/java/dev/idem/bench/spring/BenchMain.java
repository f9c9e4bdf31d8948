package dev.idem.bench.spring;

import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * The jar's entry point: runs the {@code main} of the benchmark named by the first argument, with the rest.
 *
 * <pre>java -jar idem-bench-spring/target/bench-spring.jar dev.idem.bench.spring.peers.PeerStoreBench --threads 8</pre>
 */
public final class BenchMain {
  private BenchMain() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: java -jar bench-spring.jar <benchmark class> [its arguments]");
      System.exit(2);
    }
    Class<?> bench = Class.forName(args[0], true, Thread.currentThread().getContextClassLoader());
    Method main = bench.getMethod("main", String[].class);
    main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
  }
}
