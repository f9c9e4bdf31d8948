package dev.idem.spring.proxy;

import dev.idem.spring.Idempotent;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** {@code @Idempotent} on an interface's method, as generated API interfaces have it; the scope from a header. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(InterfaceApp.Things.class)
public class InterfaceApp {

  /** The body of {@code POST /things}. */
  public record Thing(String name, int count) {}

  /** The API as an interface declares it. */
  public interface ThingsApi {
    @PostMapping(path = "/things", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Idempotent
    ResponseEntity<Map<String, Object>> create(@RequestBody Thing thing, @RequestHeader("X-Tenant") String tenant);
  }

  @RestController
  public static class Things implements ThingsApi {
    @Override
    public ResponseEntity<Map<String, Object>> create(Thing thing, String tenant) {
      if (thing.count() < 1) {
        return ResponseEntity.status(422).body(Map.of("code", "VALIDATION.count"));
      }
      return ResponseEntity.status(201).body(Map.of("id", "thing_" + UUID.randomUUID()));
    }
  }
}
