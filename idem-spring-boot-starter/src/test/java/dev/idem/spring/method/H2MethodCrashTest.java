package dev.idem.spring.method;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;

/** On H2 the database runs in an H2 TCP server in the test JVM, which the killed child only connects to. */
class H2MethodCrashTest extends MethodCrashContract {
  @TempDir
  static Path databases;
  private H2TcpServer server;

  @Override
  protected List<String> databaseProperties() throws Exception {
    server = H2TcpServer.start(databases);
    return List.of("--spring.datasource.url=" + server.url("method-crash"), "--spring.datasource.username=sa",
        "--spring.datasource.password=");
  }

  @Override
  protected String recordTable() {
    return "idem_method_crash_h2_record";
  }

  @Override
  @AfterAll
  void stop() throws Exception {
    try {
      super.stop();
    } finally {
      if (server != null) {
        server.close();
      }
    }
  }
}
