package dev.idem.jdbc.crash;

class MariaDbAtomicCrashTest extends AtomicCrashTest {
  @Override
  protected CrashDatabase database() {
    return CrashDatabase.mariadb();
  }
}
