package dev.idem.core.fingerprint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FingerprintPolicyTest {

  @Test
  void defaultsCoverTheWholeBody() {
    FingerprintPolicy defaults = FingerprintPolicy.ofDefaults();

    assertThat(defaults.includes()).isEmpty();
    assertThat(defaults.excludes()).isEmpty();
    assertThat(defaults.maxDepth()).isEqualTo(256);
    assertThat(FingerprintPolicy.builder().build()).isEqualTo(defaults).isSameAs(defaults);
  }

  @Test
  void keepsPointersInOrderWithoutRepeats() {
    FingerprintPolicy policy = FingerprintPolicy.builder().include("/b", "/a").include("/b").exclude("/a/x").build();

    assertThat(policy.includes()).containsExactly("/b", "/a");
    assertThat(policy.excludes()).containsExactly("/a/x");
    assertThatThrownBy(() -> policy.includes().add("/c")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void rejectsAPointerWithoutLeadingSlashNamingParameterAndValue() {
    FingerprintPolicy.Builder builder = FingerprintPolicy.builder();

    assertThatThrownBy(() -> builder.include("amount"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("include pointer 'amount' is not a JSON Pointer: a JSON Pointer (RFC 6901) is empty or starts "
            + "with '/' (for example \"/amount\" or \"/items/0/sku\")");
  }

  @Test
  void rejectsBadTildeEscapes() {
    assertThatThrownBy(() -> FingerprintPolicy.builder().exclude("/a~2b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("exclude pointer '/a~2b' is not a JSON Pointer: '~' at index 2 must be followed by '0' or '1'");
    assertThatThrownBy(() -> FingerprintPolicy.builder().include("/a~"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("include pointer '/a~' is not a JSON Pointer");
  }

  @Test
  void validatesEagerlyBeforeBuild() {
    FingerprintPolicy.Builder builder = FingerprintPolicy.builder().include("/ok");

    assertThatThrownBy(() -> builder.include("/fine", "bad")).isInstanceOf(IllegalArgumentException.class);

    assertThat(builder.build().includes()).containsExactly("/ok");
  }

  @Test
  void rejectsExcludingTheWholeBody() {
    assertThatThrownBy(() -> FingerprintPolicy.builder().exclude(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("exclude pointer '' would remove the whole body");
  }

  @Test
  void rejectsNulls() {
    assertThatThrownBy(() -> FingerprintPolicy.builder().include((String) null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("include pointer must not be null");
    assertThatThrownBy(() -> FingerprintPolicy.builder().exclude((String[]) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("exclude pointers");
  }

  @Test
  void validatesMaxDepth() {
    assertThatThrownBy(() -> FingerprintPolicy.builder().maxDepth(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxDepth must be between 1 and 1024, got 0");
    assertThatThrownBy(() -> FingerprintPolicy.builder().maxDepth(1025))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxDepth must be between 1 and 1024, got 1025");
    assertThat(FingerprintPolicy.builder().maxDepth(1024).build().maxDepth()).isEqualTo(1024);
  }

  @Test
  void toBuilderMakesVariantsWithoutChangingTheOriginal() {
    FingerprintPolicy base = FingerprintPolicy.builder().include("/a").exclude("/a/ts").maxDepth(10).build();

    FingerprintPolicy variant = base.toBuilder().exclude("/a/nonce").build();

    assertThat(base.excludes()).containsExactly("/a/ts");
    assertThat(variant.includes()).containsExactly("/a");
    assertThat(variant.excludes()).containsExactly("/a/ts", "/a/nonce");
    assertThat(variant.maxDepth()).isEqualTo(10);
    assertThat(base.toBuilder().build()).isEqualTo(base).hasSameHashCodeAs(base);
    assertThat(base.toString()).isEqualTo("FingerprintPolicy{includes=[/a], excludes=[/a/ts], maxDepth=10}");
  }
}
