package dev.idem.jdbc.crash;

import java.nio.file.Path;

/** On H2 the child and this JVM share a file database under {@code target/}, a new one per test. */
class H2PhasedCrashTest extends PhasedCrashTest {
  @Override
  protected CrashDatabase database() {
    return CrashDatabase.h2File(Path.of("target", "crash-h2"));
  }
}
