package dev.idem.jdbc.crash;

class PostgresAtomicCrashTest extends AtomicCrashTest {
  @Override
  protected CrashDatabase database() {
    return CrashDatabase.postgres();
  }
}
