package dev.idem.spring.proxy;

import dev.idem.spring.Idempotent;
import java.util.Map;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** An atomic {@code @Idempotent} method that is final: a class proxy cannot note when it starts. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(FinalMethodApp.Sealed.class)
public class FinalMethodApp {

  @RestController
  public static class Sealed {
    @PostMapping("/sealed")
    @Idempotent
    public final Map<String, String> create() {
      return Map.of("id", "x");
    }
  }
}
