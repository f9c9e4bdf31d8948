package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.crypto.Keyring;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code idem chaos} hands its instances their secrets through the environment, never the command line that every
 * user of the machine can read, and the secrets (the keyring too) are new at each run.
 */
class ChaosSecretsTest {

  @Test
  void theAdminKeyTheApiKeysAndTheDatabaseUrlGoThroughTheEnvironment() {
    String url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=s3cret";
    Map<String, String> env = ChaosCommand.secretEnvironment(url);

    assertThat(env).containsEntry("SPRING_DATASOURCE_URL", url)
        .containsEntry("PAYMENTS_ADMIN_KEY", ChaosCommand.adminKey());
    for (String tenant : ChaosWorkload.TENANTS) {
      assertThat(env.get("PAYMENTS_API_KEYS")).contains(ChaosWorkload.apiKey(tenant) + "=" + tenant);
    }
  }

  @Test
  void everyInstanceGetsTheRunsOneKeyringThroughTheEnvironment() {
    Map<String, String> env = ChaosCommand.secretEnvironment("jdbc:h2:mem:x");

    Keyring keyring = Keyring.parse(env.get("IDEM_ENCRYPTION_KEYRING"));

    assertThat(keyring.keyIds()).containsExactly("chaos");
    assertThat(ChaosCommand.secretEnvironment("jdbc:h2:mem:y").get("IDEM_ENCRYPTION_KEYRING"))
        .isEqualTo(env.get("IDEM_ENCRYPTION_KEYRING"));
  }

  @Test
  void theKeysCannotBeGuessed() {
    assertThat(ChaosWorkload.RUN_TOKEN).matches("[0-9a-f]{24}");
    assertThat(ChaosCommand.adminKey()).endsWith(ChaosWorkload.RUN_TOKEN);
    for (String tenant : ChaosWorkload.TENANTS) {
      assertThat(ChaosWorkload.apiKey(tenant)).endsWith("_" + ChaosWorkload.RUN_TOKEN);
    }
  }
}
