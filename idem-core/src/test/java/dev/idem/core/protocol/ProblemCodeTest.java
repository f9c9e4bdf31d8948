package dev.idem.core.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProblemCodeTest {
  private static List<ProblemCode> constants() throws IllegalAccessException {
    List<ProblemCode> all = new ArrayList<>();
    for (Field f : ProblemCode.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == ProblemCode.class) {
        all.add((ProblemCode) f.get(null));
      }
    }
    return all;
  }

  @Test
  void everyConstantIsUniqueWellFormedAndTitled() throws Exception {
    List<ProblemCode> all = constants();
    assertThat(all).hasSizeGreaterThanOrEqualTo(21);
    Set<String> codes = new HashSet<>();
    for (ProblemCode c : all) {
      assertThat(codes.add(c.code())).as("%s is defined once", c).isTrue();
      assertThat(c.code()).matches("[A-Z]+(\\.[a-z0-9_]+)+");
      assertThat(c.status()).isBetween(400, 599);
      assertThat(c.title()).isNotBlank();
      assertThat(ProblemCode.of(c.code(), c.status(), c.retryable(), c.title())).isEqualTo(c);
    }
  }

  @Test
  void theContractsStatusesAndRetryability() {
    assertThat(ProblemCode.IN_PROGRESS.status()).isEqualTo(409);
    assertThat(ProblemCode.IN_PROGRESS.retryable()).isTrue();
    assertThat(ProblemCode.RETRY_BUDGET_EXHAUSTED.status()).isEqualTo(503);
    assertThat(ProblemCode.RETRY_BUDGET_EXHAUSTED.retryable()).isFalse();
    assertThat(ProblemCode.DEPENDENCY_TIMEOUT.retryable()).isTrue();
    assertThat(ProblemCode.STORE_ERROR.retryable()).isFalse();
    assertThat(ProblemCode.KEY_EXPIRED.code()).isEqualTo("CONFLICT.idempotency.key_expired");
    assertThat(ProblemCode.KEY_EXPIRED.status()).isEqualTo(422);
    assertThat(ProblemCode.KEY_EXPIRED.retryable()).isFalse();
  }

  @Test
  void valueSemanticsOnTheCode() {
    ProblemCode conflict = ProblemCode.PAYLOAD_MISMATCH.withStatus(409);
    assertThat(conflict).isEqualTo(ProblemCode.PAYLOAD_MISMATCH).hasSameHashCodeAs(ProblemCode.PAYLOAD_MISMATCH);
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(conflict).hasToString("CONFLICT.idempotency.payload_mismatch");
    assertThat(ProblemCode.IN_PROGRESS.is("CONFLICT.idempotency.in_progress")).isTrue();
    assertThat(ProblemCode.IN_PROGRESS.is(null)).isFalse();
  }

  @Test
  void forStatus() {
    assertThat(ProblemCode.forStatus(503).code()).isEqualTo("HTTP.503");
    assertThat(ProblemCode.forStatus(503).retryable()).isTrue();
    assertThat(ProblemCode.forStatus(429).retryable()).isTrue();
    assertThat(ProblemCode.forStatus(404).retryable()).isFalse();
    assertThat(ProblemCode.forStatus(418).title()).isEqualTo("HTTP 418");
  }

  @Test
  void refusesMalformedCodesAndStatuses() {
    assertThatThrownBy(() -> ProblemCode.of("NOCATEGORY", 400, false, "t"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CATEGORY.name");
    assertThatThrownBy(() -> ProblemCode.of("A.b-c", 400, false, "t")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ProblemCode.of("A.b.", 400, false, "t")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ProblemCode.of("A.b", 302, false, "t")).hasMessageContaining("400..599");
    assertThatThrownBy(() -> ProblemCode.of("A.b", 600, false, "t")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ProblemCode.of("A.b", 400, false, " ")).hasMessageContaining("blank");
  }
}
