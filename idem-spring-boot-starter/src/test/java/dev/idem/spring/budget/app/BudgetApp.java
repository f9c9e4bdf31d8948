package dev.idem.spring.budget.app;

import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small Spring Boot application for the retry budget's tests: {@code POST /checkout} calls a dependency that
 * always fails (503, retryable), {@code GET /hello} answers 200. No DataSource: the budget needs none.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@Import(BudgetApp.Checkout.class)
public class BudgetApp {
  /** Calls that reached the handler. */
  public static final AtomicInteger HANDLED = new AtomicInteger();

  @RestController
  static class Checkout {
    @PostMapping("/checkout")
    ResponseEntity<String> checkout() {
      HANDLED.incrementAndGet();
      return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Content-Type", "application/problem+json")
          .body("{\"title\":\"card network down\",\"status\":503,\"code\":\"DEPENDENCY.unavailable\","
              + "\"retryable\":true}");
    }

    @GetMapping("/hello")
    String hello() {
      return "hello";
    }
  }
}
