package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.JdbcDialect;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

class PaymentsSchemaTest {

  @Test
  void creatingTheTablesTwiceChangesNothing() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:schema-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");

    PaymentsSchema first = PaymentsSchema.createIfMissing(ds);
    PaymentsSchema second = PaymentsSchema.createIfMissing(ds);

    assertThat(first.dialect()).isEqualTo(JdbcDialect.H2);
    assertThat(second.dialect()).isEqualTo(JdbcDialect.H2);
  }

  @Test
  void statementsSplitAtLineEndingSemicolonsWithoutComments() {
    String script = "-- a comment; with a semicolon\nCREATE TABLE a (x INT);\n\nCREATE INDEX i\n  ON a (x);\n";

    assertThat(PaymentsSchema.statements(script))
        .containsExactly("CREATE TABLE a (x INT)", "CREATE INDEX i\n  ON a (x)");
  }
}
