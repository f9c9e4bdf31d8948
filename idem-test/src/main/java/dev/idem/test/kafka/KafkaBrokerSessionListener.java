package dev.idem.test.kafka;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Stops the shared in-JVM broker ({@link KafkaBroker}) when the test session ends, while the test JVM still runs
 * normally: closing it from a shutdown hook raced the JVM's exit. Not registered by this jar: a test module that uses
 * the broker registers it in its own {@code src/test/resources/META-INF/services/
 * org.junit.platform.launcher.LauncherSessionListener} (and has {@code junit-platform-launcher} on its test classpath).
 */
public final class KafkaBrokerSessionListener implements LauncherSessionListener {
  @Override
  public void launcherSessionClosed(LauncherSession session) {
    KafkaBroker.stop();
  }
}
