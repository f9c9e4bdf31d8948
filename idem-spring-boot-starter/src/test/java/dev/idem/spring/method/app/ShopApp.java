package dev.idem.spring.method.app;

import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A small Spring Boot application (no web server) with {@code @Idempotent} service methods; each effect is a row in
 * the business table {@code idem_shop_effect}, tagged with the call's marker.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ShopApp.Shop.class, ShopApp.Provider.class, ShopApp.Checkout.class})
public class ShopApp {
  /** The business table's DDL for a database product name. */
  public static String effectTable(String product) {
    return product.toLowerCase().contains("postgres")
        ? "CREATE TABLE IF NOT EXISTS idem_shop_effect (id BIGSERIAL PRIMARY KEY, marker VARCHAR(400) NOT NULL)"
        : "CREATE TABLE IF NOT EXISTS idem_shop_effect (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
            + " marker VARCHAR(400) NOT NULL)";
  }

  public record PlaceOrder(String id, String tenant, String sku, int quantity, String note) {}

  public record Receipt(String orderId, String sku, int quantity, List<String> lines) {}

  /** Deterministic: the same order fails the same way again. */
  public static class OutOfStockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public OutOfStockException(String message) {
      super(message);
    }
  }

  /** A deterministic checked exception. */
  public static class InsufficientFundsException extends Exception {
    private static final long serialVersionUID = 1L;

    public InsufficientFundsException(String message) {
      super(message);
    }
  }

  @Service
  public static class Shop {
    /** Holds the slow method until a test lets it go. */
    public static volatile CountDownLatch started = new CountDownLatch(1);
    public static volatile CountDownLatch finish = new CountDownLatch(1);
    /** How often {@link #place} ran, rolled back or not. */
    public static final AtomicInteger PLACE_RUNS = new AtomicInteger();

    private final JdbcTemplate jdbc;

    public Shop(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    private void effect(String marker) {
      jdbc.update("INSERT INTO idem_shop_effect (marker) VALUES (?)", marker);
    }

    @Idempotent(key = "#order.id", scope = "#order.tenant", fingerprint = "#order", fingerprintExclude = "/note",
        keepExceptions = OutOfStockException.class)
    @Transactional
    public Receipt place(PlaceOrder order) {
      PLACE_RUNS.incrementAndGet();
      effect(order.tenant() + "/" + order.id());
      if (order.sku().equals("none")) {
        throw new OutOfStockException("sku none is out of stock");
      }
      if (order.sku().equals("flaky")) {
        throw new IllegalStateException("the warehouse did not answer");
      }
      return new Receipt(order.id(), order.sku(), order.quantity(), List.of("line-1", "line-2"));
    }

    @Idempotent(key = "'list-' + #p0", operation = "shop.list")
    public List<Receipt> list(String key, int n) {
      effect("list/" + key);
      return IntStream.range(0, n)
          .mapToObj(i -> new Receipt(key + "-" + i, "sku", i, List.of())).toList();
    }

    @Idempotent(key = "#key")
    public Optional<Receipt> find(String key, boolean present) {
      effect("find/" + key);
      return present ? Optional.of(new Receipt(key, "sku", 1, List.of("x"))) : Optional.empty();
    }

    @Idempotent(key = "#key")
    public void touch(String key) {
      effect("touch/" + key);
    }

    @Idempotent(key = "#key", keepExceptions = InsufficientFundsException.class)
    public int pay(String key, int amount) throws InsufficientFundsException {
      effect("pay/" + key);
      if (amount > 100) {
        throw new InsufficientFundsException("balance below " + amount);
      }
      return amount;
    }

    @Idempotent(key = "#key", mode = IdempotentRoute.Mode.LEASED)
    public String slow(String key) throws InterruptedException {
      effect("slow/" + key);
      started.countDown();
      if (!finish.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test never let the slow call finish");
      }
      return "slow " + key;
    }

    @Idempotent(key = "#key", keyRequired = false)
    public String optionalKey(String key) {
      effect("optional/" + key);
      return "ran";
    }

    /**
     * For the kill -9 test: inserts the effect, then stops for good at {@code point}: {@code "in-method"} right after
     * the insert, {@code "before-commit"} once the record is written too, just before the transaction commits;
     * {@code "none"} runs through.
     */
    @Idempotent(key = "#key")
    @Transactional
    public String crash(String key, String point) {
      effect("crash/" + key);
      if (point.equals("in-method")) {
        CrashPoint.reached("in-method");
      } else if (point.equals("before-commit")) {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
          @Override
          public void beforeCommit(boolean readOnly) {
            CrashPoint.reached("before-commit");
          }
        });
      }
      return "done " + key;
    }

    /** Holds the first {@link #hold} call just before its commit, its record written, until a test lets it go. */
    public static volatile CountDownLatch holding = new CountDownLatch(1);
    public static volatile CountDownLatch release = new CountDownLatch(1);
    public static final AtomicInteger HOLD_ARRIVALS = new AtomicInteger();

    /**
     * The first call (after {@code HOLD_ARRIVALS} was reset) stops before its commit, with its effect and its
     * record written; later ones run through.
     */
    @Idempotent(key = "#key")
    @Transactional
    public String hold(String key) {
      effect("hold/" + key);
      if (HOLD_ARRIVALS.incrementAndGet() == 1) {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
          @Override
          public void beforeCommit(boolean readOnly) {
            holding.countDown();
            try {
              release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });
      }
      return "held by " + Thread.currentThread().getName();
    }

    /** A transfer of a whole amount: its fingerprint covers the key and the amount. */
    @Idempotent(key = "#key", operation = "shop.send")
    public long send(String key, long amount) {
      effect("send/" + key);
      return amount;
    }

    /** A settlement of a decimal amount. */
    @Idempotent(key = "#key", operation = "shop.settle")
    public BigDecimal settle(String key, BigDecimal amount) {
      effect("settle/" + key);
      return amount;
    }

    /** Not idempotent: every call runs. */
    public int plain(String key) {
      effect("plain/" + key);
      return 1;
    }
  }

  /** Stands for an outside system: a LEASED method whose calls are counted. */
  @Service
  public static class Provider {
    public static final AtomicInteger CHARGES = new AtomicInteger();

    @Idempotent(key = "#key", mode = IdempotentRoute.Mode.LEASED, operation = "shop.charge")
    public String charge(String key) {
      return "charge " + CHARGES.incrementAndGet() + " of " + key;
    }
  }

  /**
   * An ATOMIC method that calls the LEASED one inside its transaction, which it must not, and one that calls an ATOMIC
   * method whose kept exception it lets through.
   */
  @Service
  public static class Checkout {
    private final JdbcTemplate jdbc;
    private final Provider provider;
    private final Shop shop;

    public Checkout(JdbcTemplate jdbc, Provider provider, Shop shop) {
      this.jdbc = jdbc;
      this.provider = provider;
      this.shop = shop;
    }

    @Idempotent(key = "#key", operation = "shop.settle-through")
    @Transactional
    public int settleThrough(String key, int amount) throws InsufficientFundsException {
      jdbc.update("INSERT INTO idem_shop_effect (marker) VALUES (?)", "settle-through/" + key);
      return shop.pay(key, amount);
    }

    @Idempotent(key = "#key", operation = "shop.checkout")
    @Transactional
    public String checkout(String key) {
      jdbc.update("INSERT INTO idem_shop_effect (marker) VALUES (?)", "checkout/" + key);
      return provider.charge(key);
    }
  }
}
