package dev.idem.spring.deadline.app;

import dev.idem.core.Deadline;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A one-endpoint application: {@code GET /deadline} answers the milliseconds left of the current deadline. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(DeadlineApp.Endpoint.class)
public class DeadlineApp {

  @RestController
  public static class Endpoint {
    @GetMapping("/deadline")
    public String deadline() {
      return Deadline.current().map(d -> Long.toString(d.remainingMillis())).orElse("none");
    }
  }
}
