package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.spring.method.app.ShopApp.Shop;
import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PostgresMethodsTest extends MethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.postgres();
  }

  /**
   * ATOMIC: a duplicate that arrives while the first holds its uncommitted record waits on the database for the
   * first to commit, then replays the first's value; its own effect rolls back.
   */
  @Test
  void anAtomicDuplicateInFlightWaitsForTheFirstThenReplaysIt() throws Exception {
    Shop.holding = new CountDownLatch(1);
    Shop.release = new CountDownLatch(1);
    Shop.HOLD_ARRIVALS.set(0);
    String key = k("h-1");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<String> first = pool.submit(() -> shop.hold(key));
      assertThat(Shop.holding.await(30, TimeUnit.SECONDS)).isTrue();
      Future<String> second = pool.submit(() -> shop.hold(key));
      Eventually.await("the duplicate waits on the first's record", Duration.ofSeconds(30),
          () -> jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
              + " AND query LIKE '%idem_method_record%'", Integer.class), waiting -> waiting > 0);
      assertThat(second.isDone()).isFalse();
      Shop.release.countDown();

      String value = first.get(30, TimeUnit.SECONDS);
      assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo(value);
      assertThat(Shop.HOLD_ARRIVALS).as("the duplicate ran the method too").hasValue(2);
      assertThat(effects("hold/" + key)).as("and its effect rolled back").isEqualTo(1);
    } finally {
      Shop.release.countDown();
      pool.shutdownNow();
    }
  }
}
