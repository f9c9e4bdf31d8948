package dev.idem.spring.method;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import org.h2.tools.Server;

/**
 * An H2 TCP server in the test JVM, listening on 127.0.0.1 only at a free port, with its databases in a directory of
 * the test's own: a database that outlives a child JVM killed in a test. Not thread-safe; close it after the test.
 *
 * <p>H2 reads its bind address (the system property {@code h2.bindAddress}) once, when its classes load, and other
 * tests in this JVM may have loaded them already without one (the server would then listen on every interface). So the
 * server runs on H2 classes of its own, from a class loader of its own, loaded while the property is set.
 */
final class H2TcpServer implements AutoCloseable {
  private static final String BIND_ADDRESS = "h2.bindAddress";
  private static final String LOOPBACK = "127.0.0.1";

  private final URLClassLoader loader;
  private final Object server;
  private final int port;

  private H2TcpServer(URLClassLoader loader, Object server, int port) {
    this.loader = loader;
    this.server = server;
    this.port = port;
  }

  /** Starts a server that creates its databases under {@code baseDir} on first use. */
  static H2TcpServer start(Path baseDir) throws Exception {
    URL h2 = Server.class.getProtectionDomain().getCodeSource().getLocation();
    URLClassLoader loader = new URLClassLoader(new URL[] {h2}, ClassLoader.getPlatformClassLoader());
    try {
      bindToLoopback(loader);
      Class<?> type = loader.loadClass(Server.class.getName());
      Object server = type.getMethod("createTcpServer", String[].class).invoke(null, (Object) new String[] {
          "-tcpPort", "0", "-tcpDaemon", "-ifNotExists", "-baseDir", baseDir.toAbsolutePath().toString()});
      type.getMethod("start").invoke(server);
      return new H2TcpServer(loader, server, (Integer) type.getMethod("getPort").invoke(server));
    } catch (Exception | Error e) {
      loader.close();
      throw e;
    }
  }

  /** Loads the server's H2 settings while {@code h2.bindAddress} is 127.0.0.1, and checks that they took it. */
  private static void bindToLoopback(ClassLoader loader) throws Exception {
    String before = System.getProperty(BIND_ADDRESS);
    System.setProperty(BIND_ADDRESS, LOOPBACK);
    try {
      Class<?> settings = Class.forName("org.h2.engine.SysProperties", true, loader);
      Object bound = settings.getField("BIND_ADDRESS").get(null);
      if (!LOOPBACK.equals(bound)) {
        throw new IllegalStateException("the H2 server would bind to '" + bound + "', not " + LOOPBACK);
      }
    } finally {
      if (before == null) {
        System.clearProperty(BIND_ADDRESS);
      } else {
        System.setProperty(BIND_ADDRESS, before);
      }
    }
  }

  /** The JDBC URL of {@code database} on this server. */
  String url(String database) {
    return "jdbc:h2:tcp://" + LOOPBACK + ":" + port + "/" + database;
  }

  /** Stops the server, closing its databases and the connections to them. */
  @Override
  public void close() throws Exception {
    try {
      Method stop = server.getClass().getMethod("stop");
      stop.invoke(server);
    } finally {
      loader.close();
    }
  }
}
