package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordKey;
import dev.idem.core.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The README's quickstart, compiled and run; and a check that the README shows exactly this code. */
class ReadmeQuickstartTest {

  static Execution quickstart(DataSource dataSource, String key, String body) {
    // README:begin
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).createSchemaIfMissing(true).build();
    Idem idem = Idem.builder().name("payments").store(store).build();

    IdempotentRequest request = IdempotentRequest.of(RecordKey.of("tenant-alice", "POST /payments", key),
        body.getBytes(StandardCharsets.UTF_8), "application/json");
    Execution execution = idem.atomic(request, tx -> {
      try (var insert = JdbcTransaction.connectionOf(tx).prepareStatement("INSERT INTO payment (id) VALUES (?)")) {
        insert.setString(1, "pay_" + key);
        insert.executeUpdate();
      }
      return StoredResponse.json(201, "{\"id\":\"pay_" + key + "\"}");
    });
    // README:end
    return execution;
  }

  @Test
  void quickstartRunsReplaysAndRefusesAChangedBody() throws Exception {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:readme;DB_CLOSE_DELAY=-1");
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE payment (id VARCHAR(300) PRIMARY KEY)");
    }

    Execution first = quickstart(ds, "order-42", "{\"amount\":1000,\"currency\":\"EUR\"}");
    Execution retry = quickstart(ds, "order-42", "{\"currency\":\"EUR\", \"amount\":1000}");
    Execution reused = quickstart(ds, "order-42", "{\"amount\":5,\"currency\":\"EUR\"}");

    assertThat(first.outcome()).isEqualTo(Execution.Outcome.STORED);
    assertThat(retry.outcome()).isEqualTo(Execution.Outcome.REPLAYED);
    assertThat(retry.response().bodyAsString()).isEqualTo("{\"id\":\"pay_order-42\"}");
    assertThat(reused.outcome()).isEqualTo(Execution.Outcome.PAYLOAD_MISMATCH);
    assertThat(reused.differingFields()).containsExactly("amount");
  }

  @Test
  void readmeShowsTheQuickstartVerbatim() throws Exception {
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(Path.of("src/test/java/dev/idem/jdbc/ReadmeQuickstartTest.java"))) {
      if (line.strip().equals("// README:end")) {
        break;
      }
      if (in) {
        code.add(line.length() >= 4 ? line.substring(4) : line.strip());
      }
      in |= line.strip().equals("// README:begin");
    }

    String readme = Files.readString(Path.of("../README.md"));

    assertThat(code).hasSizeGreaterThan(5);
    assertThat(readme).contains("```java\n" + String.join("\n", README_IMPORTS) + "\n\n" + String.join("\n", code));
  }

  /** The imports the README shows above the quickstart: each one is this file's, or a type of this package. */
  static final List<String> README_IMPORTS = List.of(
      "import dev.idem.core.Execution;",
      "import dev.idem.core.Idem;",
      "import dev.idem.core.IdempotentRequest;",
      "import dev.idem.core.RecordKey;",
      "import dev.idem.core.StoredResponse;",
      "import dev.idem.jdbc.JdbcIdempotencyStore;",
      "import dev.idem.jdbc.JdbcTransaction;",
      "import java.nio.charset.StandardCharsets;");

  @Test
  void readmeImportsAreTheOnesTheQuickstartCompilesWith() throws Exception {
    List<String> self = Files.readAllLines(Path.of("src/test/java/dev/idem/jdbc/ReadmeQuickstartTest.java"));

    for (String line : README_IMPORTS) {
      String type = line.substring("import ".length(), line.length() - 1);
      boolean samePackage = type.matches("dev\\.idem\\.jdbc\\.[A-Z]\\w*")
          && Files.exists(Path.of("src/main/java/" + type.replace('.', '/') + ".java"));
      assertThat(samePackage || self.contains(line)).as(line).isTrue();
    }
    for (String line : self) {
      if (line.startsWith("import dev.idem.")) {
        assertThat(README_IMPORTS).as("the README's imports").contains(line);
      }
    }
  }
}
