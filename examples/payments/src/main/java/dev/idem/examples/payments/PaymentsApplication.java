package dev.idem.examples.payments;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The payments reference service. */
@SpringBootApplication
public class PaymentsApplication {
  public static void main(String[] args) {
    SpringApplication.run(PaymentsApplication.class, args);
  }
}
