package dev.idem.spring.bad;

import dev.idem.spring.Idempotent;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** An application whose @Idempotent method maps every HTTP method: it must not start. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(NoMethodApp.Bad.class)
public class NoMethodApp {

  @RestController
  public static class Bad {
    @RequestMapping("/anything")
    @Idempotent
    public String any() {
      return "x";
    }
  }
}
