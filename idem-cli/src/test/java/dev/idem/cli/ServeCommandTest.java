package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code idem serve} validates its options before starting anything. */
class ServeCommandTest {

  private static String[] run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {Integer.toString(status), out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8)};
  }

  @Test
  void portOutOfRangeIsAUsageError() {
    String[] r = run("serve", "--port", "70000");

    assertThat(r[0]).isEqualTo("2");
    assertThat(r[2]).contains("--port must be 0..65535, got '70000'");
  }

  @Test
  void databaseMustBeAJdbcUrl() {
    String[] r = run("serve", "--db", "postgres://localhost/test");

    assertThat(r[0]).isEqualTo("2");
    assertThat(r[2]).contains("--db must be a JDBC URL");
  }

  @Test
  void helpPrintsTheUsage() {
    String[] r = run("serve", "--help");

    assertThat(r[0]).isEqualTo("0");
    assertThat(r[1]).contains("usage: idem serve [--port N] [--db JDBC_URL]", "IDEM_DB_URL");
  }
}
