package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.internal.SchemaScript;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class OutboxSchemaTest {
  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void eachSideCreatesOnlyItsOwnTablesUnderItsOwnNames(JdbcDialect dialect) throws IOException {
    List<String> outbox = SchemaScript.OUTBOX.statements(dialect, "events");
    assertThat(outbox).isNotEmpty().noneMatch(s -> s.contains("inbox"))
        .anyMatch(s -> s.contains("CREATE TABLE IF NOT EXISTS events ("))
        .anyMatch(s -> s.contains("CREATE TABLE IF NOT EXISTS events_attempt ("))
        .noneMatch(s -> s.contains("idem_outbox"));
    List<String> inbox = SchemaScript.INBOX.statements(dialect, "received");
    assertThat(inbox).isNotEmpty().noneMatch(s -> s.contains("outbox") || s.contains("events"))
        .anyMatch(s -> s.contains("CREATE TABLE IF NOT EXISTS received ("))
        .noneMatch(s -> s.contains("idem_inbox"));
    List<String> files = SchemaScript.OUTBOX.resources(dialect);
    assertThat(files).containsExactly("db/idem/" + dialect.resourceFolder() + "/V2__idem_outbox.sql",
        "db/idem/" + dialect.resourceFolder() + "/V7__idem_outbox_finished_index.sql");
    assertThat(outbox.size() + inbox.size()).as("the sides share V2, each statement on one side; V7 is the outbox's")
        .isEqualTo(statementsIn(files.get(0)) + statementsIn(files.get(1)));
    assertThat(SchemaScript.INBOX.resources(dialect)).containsExactly(files.get(0));
    assertThat(outbox).anyMatch(s -> s.startsWith("CREATE INDEX") && s.contains("events_finished ON events"));
    assertThatThrownBy(() -> SchemaScript.checkTable("x; DROP TABLE y")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JdbcOutboxStore.builder(Databases.pool(JdbcDialect.H2)).table("x; DROP TABLE y"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JdbcInboxStore.builder(Databases.pool(JdbcDialect.H2)).table("x; DROP TABLE y"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** The statements of a schema file, counted by their terminating semicolons outside comments. */
  private static int statementsIn(String resource) throws IOException {
    String text;
    try (InputStream in = OutboxSchemaTest.class.getClassLoader().getResourceAsStream(resource)) {
      assertThat(in).as(resource).isNotNull();
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    int n = 0;
    for (String line : text.split("\n")) {
      String code = line.contains("--") ? line.substring(0, line.indexOf("--")) : line;
      if (code.strip().endsWith(";")) {
        n++;
      }
    }
    return n;
  }
}
