package dev.idem.examples.payments.crash;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.stream.Stream;

/**
 * The kill -9 test on a fresh H2 file database in the test's temporary directory. {@code WRITE_DELAY=0}: a commit
 * reaches the file before it returns, so what was committed survives the kill.
 */
class KillNineRecoveryH2Test extends KillNineRecoveryTest {
  private static final String OPTIONS = ";WRITE_DELAY=0;AUTO_SERVER=FALSE";
  private Path dir;

  @Override
  void openDatabase(Path dir) {
    this.dir = dir;
  }

  @Override
  List<String> datasourceArgs() {
    return List.of("--spring.datasource.url=" + url(dir.resolve("payments")), "--spring.datasource.username=sa",
        "--spring.datasource.password=");
  }

  /** Opens a copy of the database files, so that the restarted service finds them exactly as the kill left them. */
  @Override
  Connection connectAfterKill() throws Exception {
    Path copy = Files.createDirectories(dir.resolve("at-kill"));
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.getFileName().toString().startsWith("payments.")).toList()) {
        Files.copy(f, copy.resolve(f.getFileName()));
      }
    }
    return DriverManager.getConnection(url(copy.resolve("payments")) + ";IFEXISTS=TRUE", "sa", "");
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(url(dir.resolve("payments")) + ";IFEXISTS=TRUE", "sa", "");
  }

  @Override
  void closeDatabase() {
    // the temporary directory goes with the test
  }

  @Override
  String databaseName() {
    return "H2";
  }

  private static String url(Path file) {
    return "jdbc:h2:file:" + file + OPTIONS;
  }
}
