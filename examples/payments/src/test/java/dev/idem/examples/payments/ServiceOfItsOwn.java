package dev.idem.examples.payments;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test class that starts the service for itself, on a fresh H2 file database or on a PostgreSQL schema of its own
 * ({@link DatabaseOfItsOwn#postgres()}, dropped afterwards), and stops it after the class's tests. The PostgreSQL
 * variant of a test class is a subclass whose {@link #onPostgres()} says so.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ServiceOfItsOwn {
  private DatabaseOfItsOwn database;
  /** The service, once the class started. */
  protected RunningService service;

  /** Whether the service runs on PostgreSQL; on H2 unless a subclass says otherwise. */
  protected boolean onPostgres() {
    return false;
  }

  /** The service's arguments besides the database's. */
  protected abstract List<String> arguments();

  /** Starts the service; {@code data} holds the H2 database, if that is where it runs. */
  @BeforeAll
  protected void start(@TempDir Path data) {
    List<String> args = new ArrayList<>();
    if (onPostgres()) {
      database = DatabaseOfItsOwn.postgres();
      args.addAll(database.arguments());
    } else {
      args.add("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE");
    }
    args.addAll(arguments());
    service = RunningService.start(args.toArray(String[]::new));
  }

  @AfterAll
  protected void stop() {
    DatabaseOfItsOwn schema = database;
    RunningService running = service;
    try (schema; running) {
      // closes the service, then drops its schema (either may be null: then it is skipped)
    }
  }
}
