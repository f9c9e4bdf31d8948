package dev.idem.spring.logging;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * A Logback appender that keeps every line with a copy of its MDC taken when it was logged (on the logging thread),
 * for tests that check what log lines carry.
 */
final class CapturedLogs extends AppenderBase<ILoggingEvent> implements AutoCloseable {
  /** One line as it was logged. */
  record Line(String logger, String level, String thread, String message, Map<String, String> mdc,
      String throwable) {
    /** Everything about the line as text, for looking for what must not be there. */
    String everything() {
      return logger + " " + level + " " + thread + " " + message + " " + mdc + " " + throwable;
    }
  }

  private final List<Line> lines = new CopyOnWriteArrayList<>();
  private final Logger logger;

  private CapturedLogs(Logger logger) {
    this.logger = logger;
  }

  /** Captures what reaches {@code loggerName} (the root logger for {@code Logger.ROOT_LOGGER_NAME}). */
  static CapturedLogs on(String loggerName) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    CapturedLogs captured = new CapturedLogs(context.getLogger(loggerName));
    captured.setContext(context);
    captured.setName("captured-" + loggerName);
    captured.start();
    captured.logger.addAppender(captured);
    return captured;
  }

  @Override
  protected void append(ILoggingEvent e) {
    IThrowableProxy thrown = e.getThrowableProxy();
    lines.add(new Line(e.getLoggerName(), e.getLevel().toString(), e.getThreadName(), e.getFormattedMessage(),
        Map.copyOf(e.getMDCPropertyMap()), thrown == null ? "" : ThrowableProxyUtil.asString(thrown)));
  }

  List<Line> lines() {
    return List.copyOf(lines);
  }

  @Override
  public void close() {
    logger.detachAppender(this);
    stop();
  }
}
