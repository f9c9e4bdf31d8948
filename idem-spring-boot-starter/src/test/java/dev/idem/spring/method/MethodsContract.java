package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.ConfigurationException;
import dev.idem.core.Idem;
import dev.idem.core.PayloadMismatchException;
import dev.idem.core.RecordKey;
import dev.idem.core.ReplayedFailureException;
import dev.idem.core.RequestInProgressException;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.spring.method.app.ShopApp;
import dev.idem.spring.method.app.ShopApp.Checkout;
import dev.idem.spring.method.app.ShopApp.InsufficientFundsException;
import dev.idem.spring.method.app.ShopApp.OutOfStockException;
import dev.idem.spring.method.app.ShopApp.PlaceOrder;
import dev.idem.spring.method.app.ShopApp.Provider;
import dev.idem.spring.method.app.ShopApp.Receipt;
import dev.idem.spring.method.app.ShopApp.Shop;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@code @Idempotent} service methods in a Spring Boot application on a real database: one effect per key under a
 * race, replays equal to the first value (generic types included), kept and transient exceptions, in-flight
 * duplicates.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MethodsContract {
  private ConfigurableApplicationContext context;
  protected Shop shop;
  protected JdbcTemplate jdbc;
  private final String tenant = "t-" + UUID.randomUUID().toString().substring(0, 8);
  /** Keys of the methods without a scope expression live in one scope: this run's own prefix keeps them apart. */
  private final String run = UUID.randomUUID().toString().substring(0, 8);

  protected String k(String key) {
    return run + "-" + key;
  }

  protected abstract List<String> databaseProperties();

  @BeforeAll
  void start() throws Exception {
    List<String> args = new ArrayList<>(List.of("--idem.name=methods-test", "--idem.store.initialize-schema=true",
        "--idem.store.table=idem_method_record", "--spring.datasource.hikari.maximum-pool-size=40"));
    args.addAll(databaseProperties());
    context = new SpringApplicationBuilder(ShopApp.class).web(WebApplicationType.NONE)
        .run(args.toArray(String[]::new));
    jdbc = context.getBean(JdbcTemplate.class);
    try (Connection c = context.getBean(DataSource.class).getConnection()) {
      jdbc.execute(ShopApp.effectTable(c.getMetaData().getDatabaseProductName()));
    }
    shop = context.getBean(Shop.class);
  }

  @AfterAll
  void stop() {
    if (context != null) {
      context.close();
    }
  }

  protected int effects(String marker) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM idem_shop_effect WHERE marker = ?", Integer.class, marker);
  }

  private PlaceOrder order(String id, String sku) {
    return new PlaceOrder(id, tenant, sku, 2, "first");
  }

  @Test
  void theBeanIsProxiedAndADuplicateCallReplaysTheFirstValue() {
    assertThat(AopUtils.isAopProxy(shop)).isTrue();
    Receipt first = shop.place(order("o-1", "apple"));
    Receipt second = shop.place(new PlaceOrder("o-1", tenant, "apple", 2, "a retry changes only the note"));

    assertThat(second).isEqualTo(first);
    assertThat(effects(tenant + "/o-1")).isEqualTo(1);
    assertThat(context.getBean(Idem.class).store()
        .find(RecordKey.of(tenant, "dev.idem.spring.method.app.ShopApp$Shop#place", "o-1"))).isPresent();
  }

  @Test
  void aLeasedMethodCalledInsideAnAtomicMethodsTransactionIsRefusedBeforeItRuns() {
    int before = Provider.CHARGES.get();

    Throwable refused = catchThrowable(() -> context.getBean(Checkout.class).checkout(k("co-1")));

    assertThat(refused).isInstanceOf(ConfigurationException.class).hasMessageContaining("leased mode for shop.charge"
        + " cannot run inside the caller's open transaction");
    assertThat(Provider.CHARGES.get()).as("the outside system was not called").isEqualTo(before);
    assertThat(effects("checkout/" + k("co-1"))).as("the outer method's write rolled back").isZero();
    Idem idem = context.getBean(Idem.class);
    assertThat(idem.store().find(RecordKey.of("methods-test", "shop.checkout", k("co-1")))).isEmpty();
    assertThat(idem.store().find(RecordKey.of("methods-test", "shop.charge", k("co-1")))).isEmpty();

    String alone = context.getBean(Provider.class).charge(k("co-2"));
    assertThat(context.getBean(Provider.class).charge(k("co-2"))).as("replayed").isEqualTo(alone);
    assertThat(Provider.CHARGES.get()).as("a leased call of its own runs once").isEqualTo(before + 1);
  }

  @Test
  void numbersPastADoublesPrecisionStillTellCallsApart() {
    shop.send(k("n-1"), 9007199254740993L);
    assertThatThrownBy(() -> shop.send(k("n-1"), 9007199254740992L)).isInstanceOf(PayloadMismatchException.class);
    shop.settle(k("d-1"), new BigDecimal("0.12345678901234567891"));
    assertThatThrownBy(() -> shop.settle(k("d-1"), new BigDecimal("0.12345678901234567892")))
        .isInstanceOf(PayloadMismatchException.class);
    assertThat(shop.send(k("n-1"), 9007199254740993L)).as("the same call replays").isEqualTo(9007199254740993L);
    assertThat(effects("send/" + k("n-1"))).isEqualTo(1);
  }

  @Test
  void ordinaryNumbersFingerprintAsTheirJsonDid() {
    shop.send(k("n-2"), 12);
    shop.settle(k("d-2"), new BigDecimal("19.99"));

    assertThat(storedHash("shop.send", "n-2")).isEqualTo(jsonHash("shop.send", "{\"key\":\"" + k("n-2")
        + "\",\"amount\":12}"));
    assertThat(storedHash("shop.settle", "d-2")).isEqualTo(jsonHash("shop.settle", "{\"key\":\"" + k("d-2")
        + "\",\"amount\":19.99}"));
  }

  private String storedHash(String operation, String key) {
    return context.getBean(Idem.class).store().find(RecordKey.of("methods-test", operation, k(key))).orElseThrow()
        .fingerprint().hash();
  }

  private static String jsonHash(String operation, String json) {
    return Fingerprinter.ofDefaults().fingerprint(operation, json.getBytes(StandardCharsets.UTF_8),
        "application/json").hash();
  }

  @Test
  void sixteenConcurrentCallsPerKeyOverTwoHundredRoundsGiveOneEffectEach() throws Exception {
    int threads = 16;
    int rounds = 200;
    int runsBefore = Shop.PLACE_RUNS.get();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < rounds; round++) {
        String id = "race-" + round;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<Receipt>> answers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          answers.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return shop.place(order(id, "pear"));
          }));
        }
        Set<Receipt> receipts = new HashSet<>();
        for (Future<Receipt> answer : answers) {
          receipts.add(answer.get(60, TimeUnit.SECONDS));
        }
        assertThat(receipts).as("round %d", round).hasSize(1);
        assertThat(effects(tenant + "/" + id)).as("round %d", round).isEqualTo(1);
      }
      // a duplicate that lost the race after running the method rolled it back (counted here, never kept); whether
      // any did depends on timing, so only the floor is certain
      assertThat(Shop.PLACE_RUNS.get() - runsBefore).as("the method ran in every round").isGreaterThanOrEqualTo(rounds);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void genericReturnTypesSurviveTheReplay() {
    List<Receipt> list = shop.list(k("g-1"), 3);
    assertThat(shop.list(k("g-1"), 3)).isEqualTo(list).first().isInstanceOf(Receipt.class);
    assertThat(effects("list/" + k("g-1"))).isEqualTo(1);

    Optional<Receipt> present = shop.find(k("g-2"), true);
    assertThat(shop.find(k("g-2"), true)).isEqualTo(present).isPresent();
    assertThat(shop.find(k("g-3"), false)).isEmpty();
    assertThat(shop.find(k("g-3"), false)).isEmpty();
    assertThat(effects("find/" + k("g-2")) + effects("find/" + k("g-3"))).isEqualTo(2);

    shop.touch(k("g-4"));
    shop.touch(k("g-4"));
    assertThat(effects("touch/" + k("g-4"))).as("a void method runs once too").isEqualTo(1);
  }

  @Test
  void anotherRequestWithTheSameKeyIsRefused() {
    shop.place(order("o-2", "apple"));
    assertThatThrownBy(() -> shop.place(order("o-2", "plum"))).isInstanceOf(PayloadMismatchException.class)
        .hasMessageContaining("sku");
    assertThat(effects(tenant + "/o-2")).isEqualTo(1);
  }

  @Test
  void aKeptExceptionIsThrownAgainWithoutItsEffect() {
    assertThatThrownBy(() -> shop.place(order("o-3", "none"))).isInstanceOf(OutOfStockException.class);
    assertThatThrownBy(() -> shop.place(order("o-3", "none")))
        .isInstanceOfSatisfying(ReplayedFailureException.class, e -> {
          assertThat(e.isOf(OutOfStockException.class)).isTrue();
          assertThat(e.exceptionMessage()).isEqualTo("sku none is out of stock");
        });
    assertThat(effects(tenant + "/o-3")).as("the failed call's writes rolled back").isZero();
  }

  @Test
  void aKeptCheckedExceptionIsThrownAsDeclaredThenReplayed() {
    assertThatThrownBy(() -> shop.pay(k("p-1"), 500)).isInstanceOf(InsufficientFundsException.class);
    assertThatThrownBy(() -> shop.pay(k("p-1"), 500)).isInstanceOf(ReplayedFailureException.class)
        .hasMessageContaining("balance below 500");
    assertThat(effects("pay/" + k("p-1"))).isZero();
  }

  @Test
  void aNestedCallsKeptExceptionIsKeptWhenItAlsoRollsBackTheCallersTransaction() {
    Checkout checkout = context.getBean(Checkout.class);
    assertThatThrownBy(() -> checkout.settleThrough(k("p-2"), 500)).isInstanceOf(InsufficientFundsException.class);

    assertThat(effects("settle-through/" + k("p-2"))).as("the caller's writes rolled back").isZero();
    assertThat(effects("pay/" + k("p-2"))).as("the nested call's writes rolled back").isZero();
    Idem idem = context.getBean(Idem.class);
    assertThat(idem.store().find(RecordKey.of("methods-test", "shop.settle-through", k("p-2"))))
        .as("the caller kept nothing").isEmpty();
    assertThatThrownBy(() -> shop.pay(k("p-2"), 500)).as("the nested call's failure was kept on its own")
        .isInstanceOf(ReplayedFailureException.class).hasMessageContaining("balance below 500");
    assertThatThrownBy(() -> checkout.settleThrough(k("p-2"), 500)).as("a retry of the caller gets it replayed")
        .isInstanceOf(ReplayedFailureException.class);
    assertThat(effects("pay/" + k("p-2"))).isZero();
  }

  @Test
  void aTransientExceptionFreesTheKey() {
    assertThatThrownBy(() -> shop.place(order("o-4", "flaky"))).isInstanceOf(IllegalStateException.class);
    assertThat(effects(tenant + "/o-4")).isZero();
    assertThat(shop.place(order("o-4", "apple")).sku()).isEqualTo("apple");
    assertThat(effects(tenant + "/o-4")).isEqualTo(1);
  }

  @Test
  void anInFlightDuplicateGetsTheTypedExceptionThenTheReplay() throws Exception {
    Shop.started = new CountDownLatch(1);
    Shop.finish = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<String> first = pool.submit(() -> shop.slow(k("s-1")));
      assertThat(Shop.started.await(30, TimeUnit.SECONDS)).isTrue();
      assertThatThrownBy(() -> shop.slow(k("s-1"))).isInstanceOfSatisfying(RequestInProgressException.class,
          e -> assertThat(e.retryAfter()).isPositive());
      Shop.finish.countDown();
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("slow " + k("s-1"));
      assertThat(shop.slow(k("s-1"))).isEqualTo("slow " + k("s-1"));
      assertThat(effects("slow/" + k("s-1"))).isEqualTo(1);
    } finally {
      Shop.finish.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void aMissingKeyFailsTheCallOrRunsItWhenTheKeyIsOptional() {
    assertThatThrownBy(() -> shop.place(new PlaceOrder(null, tenant, "apple", 1, "")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("#order.id");
    assertThatThrownBy(() -> shop.place(null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("@Idempotent(key = \"#order.id\") of " + Shop.class.getName() + ".place cannot be"
            + " evaluated");
    int before = effects("optional/null");
    assertThat(shop.optionalKey(null)).isEqualTo("ran");
    assertThat(shop.optionalKey(null)).isEqualTo("ran");
    assertThat(effects("optional/null") - before).as("no key: the method runs each time").isEqualTo(2);
  }
}
