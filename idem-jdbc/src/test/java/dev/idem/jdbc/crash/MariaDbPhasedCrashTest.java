package dev.idem.jdbc.crash;

class MariaDbPhasedCrashTest extends PhasedCrashTest {
  @Override
  protected CrashDatabase database() {
    return CrashDatabase.mariadb();
  }
}
