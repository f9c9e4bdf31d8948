package dev.idem.test.kafka;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Stops the shared in-JVM broker ({@link KafkaBroker}) when the test session ends, while the test JVM still runs
 * normally: closing it from a shutdown hook raced the JVM's exit. Registered in
 * {@code META-INF/services/org.junit.platform.launcher.LauncherSessionListener}.
 */
public final class KafkaBrokerSessionListener implements LauncherSessionListener {
  @Override
  public void launcherSessionClosed(LauncherSession session) {
    KafkaBroker.stop();
  }
}
