package dev.idem.servlet.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Deadline;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The filter without a container: header parsing, the thread's current deadline, and configuration checks. */
class DeadlineFilterTest {
  private final AtomicLong now = new AtomicLong();
  /** One supplier instance: deadlines compare only on the same source. */
  private final LongSupplier nanos = now::get;

  @AfterEach
  void noDeadlineLeaks() {
    assertThat(Deadline.current()).isEmpty();
  }

  /** A request with one header and working attributes; every other method answers null. */
  private static HttpServletRequest request(String name, String value) {
    Map<String, Object> attributes = new HashMap<>();
    return (HttpServletRequest) Proxy.newProxyInstance(DeadlineFilterTest.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> switch (method.getName()) {
          case "getHeader" -> name.equalsIgnoreCase((String) args[0]) ? value : null;
          case "getAttribute" -> attributes.get((String) args[0]);
          case "setAttribute" -> attributes.put((String) args[0], args[1]);
          default -> null;
        });
  }

  private static HttpServletResponse response() {
    return (HttpServletResponse) Proxy.newProxyInstance(DeadlineFilterTest.class.getClassLoader(),
        new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> null);
  }

  @Test
  void parsesDigitsOnlyAndCapsAtOneHour() {
    DeadlineFilter filter = DeadlineFilter.ofDefaults();

    assertThat(filter.parse(request("Request-Timeout", "1500"))).isEqualTo(1500);
    assertThat(filter.parse(request("Request-Timeout", " 15 "))).isEqualTo(15);
    assertThat(filter.parse(request("Request-Timeout", "0"))).isZero();
    assertThat(filter.parse(request("Request-Timeout", "0000000007"))).isEqualTo(7);
    assertThat(filter.parse(request("Request-Timeout", "9999999999"))).isEqualTo(3_600_000);
    for (String bad : new String[] {"", " ", "-1", "+1", "1e3", "1.0", "10ms", "1 2", "00000000007", "\u0661"}) {
      assertThat(filter.parse(request("Request-Timeout", bad))).as("'%s'", bad).isEqualTo(-1);
    }
    assertThat(filter.parse(request("Other", "100"))).isEqualTo(-1);
  }

  @Test
  void aCustomHeaderIsRead() {
    DeadlineFilter filter = DeadlineFilter.builder().header("X-Budget-Ms").build();

    assertThat(filter.parse(request("X-Budget-Ms", "250"))).isEqualTo(250);
    assertThat(filter.parse(request("Request-Timeout", "250"))).isEqualTo(-1);
  }

  @Test
  void theDeadlineIsCurrentOnlyWhileTheChainRunsEvenWhenItThrows() {
    DeadlineFilter filter = DeadlineFilter.builder().nanoSource(nanos).build();
    HttpServletRequest request = request("Request-Timeout", "800");
    AtomicReference<Optional<Deadline>> inside = new AtomicReference<>();

    assertThatThrownBy(() -> filter.doFilter(request, response(), (req, res) -> {
      inside.set(Deadline.current());
      throw new ServletException("handler failed");
    })).isInstanceOf(ServletException.class);

    assertThat(inside.get()).hasValueSatisfying(d -> assertThat(d.remaining()).isEqualTo(Duration.ofMillis(800)));
    assertThat(DeadlineFilter.deadline(request)).isEqualTo(inside.get());
    assertThat(Deadline.current()).isEmpty();
  }

  @Test
  void anOuterDeadlineOnTheThreadIsNotStretched() throws Exception {
    DeadlineFilter filter = DeadlineFilter.builder().nanoSource(nanos).build();
    Deadline outer = Deadline.after(Duration.ofMillis(100), nanos);
    AtomicReference<Optional<Deadline>> inside = new AtomicReference<>();

    try (Deadline.Binding b = outer.enter()) {
      filter.doFilter(request("Request-Timeout", "5000"), response(), (req, res) -> inside.set(Deadline.current()));
      assertThat(Deadline.current()).containsSame(outer);
    }

    assertThat(inside.get()).containsSame(outer);
  }

  @Test
  void badConfigurationNamesTheSettingAndValue() {
    assertThatThrownBy(() -> DeadlineFilter.builder().header("Bad Header"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("header").hasMessageContaining("Bad Header");
    assertThatThrownBy(() -> DeadlineFilter.builder().max(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max").hasMessageContaining("PT0S");
    assertThatThrownBy(() -> DeadlineFilter.builder().max(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max");
    assertThatThrownBy(() -> DeadlineFilter.builder().minRemaining(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minRemaining");
    assertThatThrownBy(() -> DeadlineFilter.builder().max(Duration.ofMillis(10)).minRemaining(Duration.ofMillis(20))
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be below minRemaining");
  }
}
