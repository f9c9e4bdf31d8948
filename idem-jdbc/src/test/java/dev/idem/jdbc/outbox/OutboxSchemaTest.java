package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.outbox.internal.OutboxSchema;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class OutboxSchemaTest {
  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void eachSideCreatesOnlyItsOwnTablesUnderItsOwnNames(JdbcDialect dialect) {
    List<String> outbox = OutboxSchema.statements(dialect, "events", null);
    assertThat(outbox).isNotEmpty().noneMatch(s -> s.contains("inbox"))
        .anyMatch(s -> s.contains("CREATE TABLE IF NOT EXISTS events ("))
        .anyMatch(s -> s.contains("CREATE TABLE IF NOT EXISTS events_attempt ("))
        .noneMatch(s -> s.contains("idem_outbox"));
    List<String> inbox = OutboxSchema.statements(dialect, null, "received");
    assertThat(inbox).isNotEmpty().noneMatch(s -> s.contains("outbox") || s.contains("events"))
        .anyMatch(s -> s.contains("CREATE TABLE IF NOT EXISTS received ("));
    assertThat(OutboxSchema.statements(dialect, "a", "b")).hasSize(outbox.size() + inbox.size());
    assertThatThrownBy(() -> OutboxSchema.statements(dialect, "x; DROP TABLE y", null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
