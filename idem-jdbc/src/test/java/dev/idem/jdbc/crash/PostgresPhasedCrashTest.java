package dev.idem.jdbc.crash;

class PostgresPhasedCrashTest extends PhasedCrashTest {
  @Override
  protected CrashDatabase database() {
    return CrashDatabase.postgres();
  }
}
