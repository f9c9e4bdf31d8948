package dev.idem.spring.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.idem.core.Execution;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.spring.internal.OutcomeNames;
import dev.idem.spring.logging.CapturedLogs.Line;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/** {@link Slf4jIdemListener}'s lines and MDC, and the MDC it leaves behind: exactly what was there before. */
class Slf4jIdemListenerTest {
  private static final String LOGGER = "test.slf4j.listener";
  private static final RecordKey KEY = RecordKey.of("alice", "POST /payments", "pay-1");

  private final Slf4jIdemListener listener = new Slf4jIdemListener(LoggerFactory.getLogger(LOGGER));
  private CapturedLogs logs;

  @BeforeEach
  void capture() {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(LOGGER).setLevel(Level.DEBUG);
    logs = CapturedLogs.on(LOGGER);
    MDC.clear();
  }

  @AfterEach
  void release() {
    logs.close();
    MDC.clear();
  }

  @Test
  void aTransitionLineCarriesTheStatesAndTheRequestsAttemptAndTheMdcIsRestored() {
    MDC.put(IdemMdc.IDEMPOTENCY_KEY, "as-sent");
    MDC.put(IdemMdc.ATTEMPT, "3");
    MDC.put("request_id", "r-1");
    Map<String, String> before = MDC.getCopyOfContextMap();

    listener.onTransition("payments", KEY, null, RecordState.IN_PROGRESS, "create");
    listener.onTransition("payments", KEY, RecordState.IN_PROGRESS, null, null);

    List<Line> lines = logs.lines();
    assertThat(lines).extracting(Line::message).containsExactly(
        "idem 'payments' POST /payments scope=alice idempotency_key=pay-1 ABSENT -> IN_PROGRESS phase=create",
        "idem 'payments' POST /payments scope=alice idempotency_key=pay-1 IN_PROGRESS -> ABSENT");
    assertThat(lines.get(0).mdc()).containsEntry(IdemMdc.IDEMPOTENCY_KEY, "pay-1").containsEntry(IdemMdc.SCOPE,
        "alice").containsEntry(IdemMdc.OPERATION, "POST /payments").containsEntry(IdemMdc.FROM_STATE, "ABSENT")
        .containsEntry(IdemMdc.TO_STATE, "IN_PROGRESS").containsEntry(IdemMdc.ATTEMPT, "3")
        .containsEntry("request_id", "r-1");
    assertThat(lines.get(1).mdc()).containsEntry(IdemMdc.FROM_STATE, "IN_PROGRESS")
        .containsEntry(IdemMdc.TO_STATE, "ABSENT");
    assertThat(MDC.getCopyOfContextMap()).isEqualTo(before);
  }

  @Test
  void conflictsCarryTheirErrorCodeAndAMismatchIsLoggedAtInfo() {
    listener.onExecution("payments", Execution.payloadMismatch(KEY, List.of("amount")), Duration.ofMillis(2));
    listener.onExecution("payments", Execution.inProgress(KEY, Duration.ofSeconds(4)), Duration.ofMillis(1));

    List<Line> lines = logs.lines();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0).level()).isEqualTo("INFO");
    assertThat(lines.get(0).message()).contains("outcome=PAYLOAD_MISMATCH", "differing_fields=[amount]");
    assertThat(lines.get(0).mdc()).containsEntry(IdemMdc.ERROR_CODE, Slf4jIdemListener.PAYLOAD_MISMATCH_CODE);
    assertThat(lines.get(1).level()).isEqualTo("DEBUG");
    assertThat(lines.get(1).mdc()).containsEntry(IdemMdc.ERROR_CODE, Slf4jIdemListener.IN_PROGRESS_CODE)
        .doesNotContainKeys(IdemMdc.FROM_STATE, IdemMdc.TO_STATE);
    assertThat(MDC.getCopyOfContextMap()).isNullOrEmpty();
  }

  @Test
  void differingMemberNamesAreLoggedWithControlAndNonAsciiCharactersEscaped() {
    List<String> names = List.of("amount\r\n2026-01-01 INFO forged line", "\u001b[31mred\u001b[0m", "caf\u00e9\\x");

    listener.onExecution("payments", Execution.payloadMismatch(KEY, names), Duration.ofMillis(2));

    List<Line> lines = logs.lines();
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0).message()).doesNotContain("\r", "\n", "\u001b", "\u00e9")
        .contains("differing_fields=[amount\\r\\n2026-01-01 INFO forged line, \\u001b[31mred\\u001b[0m,"
            + " caf\\u00e9\\\\x]");
  }

  @Test
  void anExpiredKeyIsLoggedAtInfoWithItsCodeAndItsMeterName() {
    listener.onExecution("payments", Execution.keyExpired(KEY, Instant.parse("2026-01-02T00:00:00Z")),
        Duration.ofMillis(1));

    List<Line> lines = logs.lines();
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0).level()).isEqualTo("INFO");
    assertThat(lines.get(0).message()).contains("outcome=KEY_EXPIRED");
    assertThat(lines.get(0).mdc()).containsEntry(IdemMdc.ERROR_CODE, "CONFLICT.idempotency.key_expired");
    assertThat(OutcomeNames.of(Execution.Outcome.KEY_EXPIRED)).isEqualTo("key_expired");
  }

  @Test
  void aReleaseNamesTheExceptionsClassButNotItsMessage() {
    listener.onReleased("payments", KEY, new IllegalStateException("Bearer sk_live_do_not_log"));
    listener.onCompleterRecovery("payments", KEY, true, null);

    assertThat(logs.lines()).extracting(Line::message).containsExactly(
        "idem 'payments' POST /payments scope=alice idempotency_key=pay-1 released"
            + " error=java.lang.IllegalStateException",
        "idem 'payments' POST /payments scope=alice idempotency_key=pay-1 completer recovered the record");
    assertThat(logs.lines()).allSatisfy(l -> assertThat(l.everything()).doesNotContain("sk_live"));
  }

  @Test
  void aFailedRecoveryLogsTheClassesAndFramesOfTheFailureButNoMessage() {
    SQLException driver = new SQLException("password=hunter2 for user app", "08001");
    IllegalStateException phase = new IllegalStateException("provider answered {\"card\":\"4242424242424242\"}",
        driver);
    phase.addSuppressed(new IllegalArgumentException("Bearer sk_live_do_not_log"));

    listener.onCompleterRecovery("payments", KEY, false, phase);

    Line line = logs.lines().get(0);
    assertThat(logs.lines()).hasSize(1);
    assertThat(line.level()).isEqualTo("WARN");
    assertThat(line.message()).isEqualTo("idem 'payments' POST /payments scope=alice idempotency_key=pay-1 completer"
        + " could not finish the record error=java.lang.IllegalStateException");
    assertThat(line.throwable()).contains("java.lang.IllegalStateException", "java.sql.SQLException (SQLState 08001)",
        "java.lang.IllegalArgumentException", "Slf4jIdemListenerTest.aFailedRecoveryLogsTheClassesAndFramesOfThe");
    assertThat(line.everything()).doesNotContain("hunter2").doesNotContain("4242424242424242")
        .doesNotContain("sk_live");
  }

  @Test
  void aFailureWhoseCausesLoopIsCopiedOnce() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.addSuppressed(b);

    Throwable copy = Slf4jIdemListener.RedactedException.of(b);

    assertThat(copy.getMessage()).isEqualTo("java.lang.RuntimeException");
    assertThat(copy.getCause().getMessage()).isEqualTo("java.lang.RuntimeException");
    assertThat(copy.getCause().getSuppressed()).isEmpty();
    assertThat(copy.getStackTrace()).isEqualTo(b.getStackTrace());
  }

  @Test
  void nothingIsBuiltWhenTheLevelIsOff() {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(LOGGER).setLevel(Level.WARN);

    listener.onTransition("payments", KEY, null, RecordState.IN_PROGRESS, null);
    listener.onExecution("payments", Execution.payloadMismatch(KEY, List.of()), Duration.ZERO);

    assertThat(logs.lines()).isEmpty();
    assertThat(MDC.getCopyOfContextMap()).isNullOrEmpty();
  }
}
