package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.examples.payments.auth.ApiKeys;
import dev.idem.examples.payments.auth.Tenant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

class ApiKeysTest {

  @Test
  void keysAreReadVerbatimWithUnderscoresAndCapitals() {
    StandardEnvironment env = environment(Map.of("payments.api-keys.sk_Live_A_1", "acme",
        "payments.api-keys[sk.with.dots]", "globex"));

    ApiKeys keys = ApiKeys.from(env);

    assertThat(keys.tenantOf("sk_Live_A_1")).contains(new Tenant("acme"));
    assertThat(keys.tenantOf("sk.with.dots")).contains(new Tenant("globex"));
    assertThat(keys.tenantOf("sk_live_a_1")).isEmpty();
    assertThat(keys.tenantOf("sk_test_alice")).isEmpty();
  }

  @Test
  void aListOfPairsConfiguresKeysFromOneVariable() {
    ApiKeys keys = ApiKeys.from(environment(Map.of("payments.api-keys", "sk_1=acme, sk_2=globex")));

    assertThat(keys.tenantOf("sk_1")).contains(new Tenant("acme"));
    assertThat(keys.tenantOf("sk_2")).contains(new Tenant("globex"));
    assertThat(keys.size()).isEqualTo(2);
  }

  @Test
  void theListMayComeFromTheEnvironmentVariable() {
    ApiKeys keys = ApiKeys.from(environment(Map.of("PAYMENTS_API_KEYS", "sk_env_1=acme")));

    assertThat(keys.tenantOf("sk_env_1")).contains(new Tenant("acme"));
    assertThat(keys.tenantOf("sk_test_alice")).isEmpty();
  }

  @Test
  void withoutConfiguredKeysTheTestKeysAreActive() {
    ApiKeys keys = ApiKeys.from(environment(Map.of()));

    assertThat(keys.tenantOf("sk_test_alice")).contains(new Tenant("alice"));
    assertThat(keys.tenantOf("sk_test_bob")).contains(new Tenant("bob"));
    assertThat(keys.tenantOf(null)).isEmpty();
    assertThat(keys.tenantOf("")).isEmpty();
  }

  @Test
  void aKeyWithoutATenantIsAConfigurationError() {
    assertThatThrownBy(() -> ApiKeys.from(environment(Map.of("payments.api-keys", "sk_1"))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payments.api-keys");
    assertThatThrownBy(() -> ApiKeys.of(Map.of("sk_1", " ")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sk_1");
  }

  private static StandardEnvironment environment(Map<String, Object> properties) {
    StandardEnvironment env = new StandardEnvironment();
    env.getPropertySources().addFirst(new MapPropertySource("test", properties));
    return env;
  }
}
