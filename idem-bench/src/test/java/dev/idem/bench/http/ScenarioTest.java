package dev.idem.bench.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ScenarioTest {

  @ParameterizedTest
  @ValueSource(strings = {"http://example.com/x", "https://127.0.0.1/x", "http://127.0.0.2:8080/x",
      "http://10.0.0.1/x", "http://[::1]:8080/x", "ftp://localhost/x", "http://user@127.0.0.1/x",
      "http://localhost.example.com/x", "//127.0.0.1/x", "127.0.0.1:8080"})
  void rejectsNonLocalUrlsNamingTheValue(String url) {
    assertThatThrownBy(() -> Scenario.builder("s").url(url)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("url").hasMessageContaining(url);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://127.0.0.1:8080/x", "http://localhost/x?y=1", "HTTP://LOCALHOST:1/"})
  void acceptsLocalUrls(String url) {
    assertThat(Scenario.builder("s").url(url).build().uri().toString()).isEqualTo(url);
  }

  @Test
  void defaultsAndAccessors() {
    Scenario s = Scenario.builder("s").url("http://127.0.0.1:1/x").header("A", "1").header("A", "2").build();
    assertThat(s.method()).isEqualTo("GET");
    assertThat(s.keys()).isEqualTo(KeyStrategy.none());
    assertThat(s.headers()).containsExactly(Map.entry("A", "1"), Map.entry("A", "2"));
    assertThat(s.expectedStatuses()).hasSize(100).contains(200, 201, 204, 299).doesNotContain(199, 300);
    assertThat(s.hasBody()).isFalse();
    assertThat(s.bodyFor(7)).isEmpty();
  }

  @Test
  void fixedBodyIsCopied() {
    byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
    Scenario s = Scenario.builder("s").url("http://127.0.0.1:1/x").body(body).build();
    body[0] = 'x';
    assertThat(new String(s.bodyFor(3), StandardCharsets.UTF_8)).isEqualTo("{}");
  }

  @Test
  void validatesEagerlyNamingParameterAndValue() {
    Scenario.Builder b = Scenario.builder("s");
    assertThatThrownBy(() -> Scenario.builder(" ")).hasMessageContaining("name");
    assertThatThrownBy(() -> b.method("post")).hasMessageContaining("method").hasMessageContaining("post");
    assertThatThrownBy(() -> b.header("Host", "x")).hasMessageContaining("Host");
    assertThatThrownBy(() -> b.header("Idempotency-Key", "k")).hasMessageContaining("keys(KeyStrategy)");
    assertThatThrownBy(() -> b.header("Bad Name", "v")).hasMessageContaining("Bad Name");
    assertThatThrownBy(() -> b.expectStatus(200, 42)).hasMessageContaining("42");
    assertThatThrownBy(() -> b.expectStatus()).hasMessageContaining("expectStatus");
    assertThatThrownBy(b::build).isInstanceOf(IllegalStateException.class).hasMessageContaining("url");
  }

  @Test
  void keyStrategies() {
    assertThat(KeyStrategy.parse("none")).isEqualTo(KeyStrategy.none());
    assertThat(KeyStrategy.parse("unique")).isEqualTo(KeyStrategy.unique());
    assertThat(KeyStrategy.parse("pool:7")).isEqualTo(KeyStrategy.fixedPool(7));
    assertThat(KeyStrategy.fixedPool(7)).hasToString("pool:7");
    assertThat(KeyStrategy.fixedPool(2, "run1-")).hasToString("pool:2:run1-");
    assertThat(KeyStrategy.fixedPool(3).poolKey(2)).isEqualTo("k-2");
    assertThat(KeyStrategy.fixedPool(3, "r-").poolKey(0)).isEqualTo("r-0");
    assertThatThrownBy(() -> KeyStrategy.fixedPool(0)).hasMessageContaining("got 0");
    assertThatThrownBy(() -> KeyStrategy.fixedPool(3).poolKey(3)).hasMessageContaining("got 3");
    assertThatThrownBy(() -> KeyStrategy.fixedPool(3, "a b")).hasMessageContaining("a b");
    assertThatThrownBy(() -> KeyStrategy.parse("pool:x")).hasMessageContaining("\"x\"");
    assertThatThrownBy(() -> KeyStrategy.parse("random")).hasMessageContaining("\"random\"");
    assertThat(KeyStrategy.randomKey()).isNotEqualTo(KeyStrategy.randomKey());
  }
}
