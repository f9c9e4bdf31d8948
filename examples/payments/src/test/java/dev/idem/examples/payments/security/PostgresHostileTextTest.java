package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.DatabaseOfItsOwn;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link HostileTextTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own: the database that
 * refuses a NUL in text with an error, which the service must never meet, nor show. Also: when the provider's own
 * table is gone (renamed for the test, then restored), its routes answer 503 without the database's error text.
 */
class PostgresHostileTextTest extends HostileTextTest {
  PostgresHostileTextTest() {
    database = DatabaseOfItsOwn.postgres();
  }

  @Test
  void aProviderDatabaseErrorNeverReachesTheAnswer() throws SQLException {
    String charge = "{\"account_id\":\"acct_text\",\"amount\":1,\"currency\":\"EUR\"}";
    ddl("ALTER TABLE pay_provider_charge RENAME TO pay_provider_charge_away");
    Answer failed;
    try {
      failed = service.post("/provider/charges", null, UUID.randomUUID().toString(), charge);
    } finally {
      ddl("ALTER TABLE pay_provider_charge_away RENAME TO pay_provider_charge");
    }

    assertThat(failed.status()).as(failed.toString()).isEqualTo(503);
    assertThat(failed.code()).isEqualTo("DEPENDENCY.unavailable");
    assertNoSqlText(failed.text(), failed.toString());
    assertThat(failed.text()).doesNotContain("pay_provider_charge");
  }

  private void ddl(String sql) throws SQLException {
    try (Connection c = service.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
