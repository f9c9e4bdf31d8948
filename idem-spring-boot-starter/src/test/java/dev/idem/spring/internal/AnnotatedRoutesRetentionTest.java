package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.OperationPolicy;
import dev.idem.spring.Idempotent;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code @Idempotent(retention)} overrides the default retention, like {@code ttl} overrides the default TTL. */
class AnnotatedRoutesRetentionTest {

  static class Handlers {
    @Idempotent(ttl = "1h", retention = "7d")
    void week() {}

    @Idempotent(retention = "0s")
    void none() {}

    @Idempotent
    void inherited() {}

    @Idempotent(retention = "-1s")
    void negative() {}
  }

  private static OperationPolicy policy(String method) throws Exception {
    Idempotent a = Handlers.class.getDeclaredMethod(method).getAnnotation(Idempotent.class);
    return AnnotatedRoutes.policy(method, a, OperationPolicy.builder().retention(Duration.ofDays(90)).build());
  }

  @Test
  void theAnnotationsRetentionWinsOverTheDefault() throws Exception {
    assertThat(policy("week").retention()).isEqualTo(Duration.ofDays(7));
    assertThat(policy("week").ttl()).isEqualTo(Duration.ofHours(1));
    assertThat(policy("none").retention()).isZero();
    assertThat(policy("inherited").retention()).isEqualTo(Duration.ofDays(90));
    assertThatThrownBy(() -> policy("negative")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("@Idempotent on negative: retention must not be negative");
  }
}
