package dev.idem.bench.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.bench.outbox.ConsumerComparison.Run;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The consumer benchmarks measure what they claim: on the real brokers and PostgreSQL, every variant applies exactly
 * one effect per message, and only the inbox variant writes inbox rows (one per message).
 */
class ConsumerBenchTest {
  private static final Map<String, String> TINY = Map.of("events", "150", "prefill", "500");

  @Test
  void rabbitMqVariantsApplyOneEffectPerMessage() throws Exception {
    try (RabbitMqInboxBench bench = RabbitMqInboxBench.open(TINY)) {
      assertOneEffectPerMessage(bench, bench.comparison());
    }
  }

  @Test
  void natsVariantsApplyOneEffectPerMessage() throws Exception {
    try (NatsInboxBench bench = NatsInboxBench.open(TINY)) {
      assertOneEffectPerMessage(bench, bench.comparison());
    }
  }

  /** Runs each variant twice, in both orders, and checks the rows each run added. */
  private static void assertOneEffectPerMessage(ConsumerComparison.Consumers bench, ConsumerComparison comparison)
      throws Exception {
    InboxTables tables = comparison.tables();
    int events = comparison.events();
    for (String variant : new String[] {"baseline", "inbox", "inbox", "baseline"}) {
      long lastEffect = Long.parseLong(query(tables, "SELECT max(id) FROM " + tables.effects));
      long inboxBefore = tables.inboxRows();

      Run run = comparison.run(bench, variant, "per-record");

      String added = " FROM " + tables.effects + " WHERE id > " + lastEffect;
      assertThat(query(tables, "SELECT count(*)" + added)).as(variant + ": effects").isEqualTo("" + events);
      assertThat(query(tables, "SELECT count(DISTINCT event_id)" + added)).as(variant + ": messages with an effect")
          .isEqualTo("" + events);
      assertThat(tables.inboxRows() - inboxBefore).as(variant + ": inbox rows")
          .isEqualTo(variant.equals("inbox") ? events : 0);
      assertThat(run.rate()).as(variant + ": events/s").isPositive();
    }
  }

  private static String query(InboxTables tables, String sql) throws SQLException {
    try (Connection c = tables.pool.getConnection()) {
      return BenchSupport.scalar(c, sql);
    }
  }
}
