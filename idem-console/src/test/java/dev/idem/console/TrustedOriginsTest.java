package dev.idem.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Idem;
import dev.idem.core.memory.InMemoryIdempotencyStore;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The console's trusted origins: checked when the console is built, kept as browsers send an {@code Origin} (scheme
 * and host in lower case, no default port), and matched against the header the same way.
 */
class TrustedOriginsTest {
  private final Idem idem = Idem.builder().store(new InMemoryIdempotencyStore()).build();

  @Test
  void originsAreKeptAsBrowsersSendThem() {
    ConsoleServlet console = ConsoleServlet.builder(idem).trustedOrigins(List.of("https://Ops.Example.com:443",
        "http://10.0.0.5:8080", "http://[::1]:80", " https://ops.example.com ")).build();

    assertThat(console.trustedOrigins())
        .containsExactlyInAnyOrder("https://ops.example.com", "http://10.0.0.5:8080", "http://[::1]");
    assertThat(ConsoleServlet.builder(idem).build().trustedOrigins()).isEmpty();
    assertThat(console.toString()).contains("origins=");
  }

  @Test
  void anOriginHeaderIsReadTheSameWayAndAnythingElseIsNoOrigin() {
    assertThat(ConsoleServlet.origin("HTTPS://OPS.example.com")).isEqualTo("https://ops.example.com");
    assertThat(ConsoleServlet.origin("http://ops.example.com:8080")).isEqualTo("http://ops.example.com:8080");
    assertThat(ConsoleServlet.origin("null")).isNull();
    assertThat(ConsoleServlet.origin(null)).isNull();
    assertThat(ConsoleServlet.origin("https://ops.example.com/x")).isNull();
  }

  @Test
  void anInvalidOriginFailsTheBuild() {
    for (String bad : List.of("ops.example.com", "//ops.example.com", "ftp://ops.example.com",
        "https://ops.example.com/", "https://ops.example.com/console", "https://ops.example.com?x=1",
        "https://ops.example.com#top", "https://user@ops.example.com", "*", "null", "", "https://",
        "https://ops_example.com", "mailto:ops@example.com")) {
      assertThatThrownBy(() -> ConsoleServlet.builder(idem).trustedOrigins(List.of(bad))).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + bad + "'");
    }
    assertThatThrownBy(() -> ConsoleServlet.builder(idem).trustedOrigins(null))
        .isInstanceOf(NullPointerException.class);
  }
}
