package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documented default admin key ({@code sk_admin}) is for local development: the service refuses to start with it
 * unless it listens on a loopback address only, and says how to fix that. Any other key starts on any address.
 */
class DefaultAdminKeyTest {
  @TempDir
  Path data;

  @Test
  void theDefaultKeyOnEveryInterfaceIsRefusedAtStartup() {
    assertThatThrownBy(() -> RunningService.start(database(), "--server.address=0.0.0.0").close())
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("payments.admin-key is the documented default")
        .hasMessageContaining("would listen on 0.0.0.0").hasMessageContaining("PAYMENTS_ADMIN_KEY")
        .hasMessageContaining("server.address=127.0.0.1");
  }

  @Test
  void theDefaultKeyOnLoopbackStarts() {
    try (RunningService service = RunningService.start(database(), "--server.address=localhost")) {
      assertThat(service.get("/admin/faults", "sk_admin").status()).isEqualTo(200);
    }
  }

  @Test
  void theCheckReadsTheAddressAsTheServerWill() {
    for (String address : new String[] {null, "", " ", "0.0.0.0", "::", "192.0.2.1"}) {
      assertThatThrownBy(() -> PaymentsConfiguration.refuseDefaultAdminKeyOffLoopback("sk_admin", address))
          .as(String.valueOf(address)).isInstanceOf(IllegalStateException.class);
    }
    for (String address : new String[] {"127.0.0.1", "127.0.0.2", "::1", "localhost", " 127.0.0.1 "}) {
      assertThatCode(() -> PaymentsConfiguration.refuseDefaultAdminKeyOffLoopback("sk_admin", address))
          .as(address).doesNotThrowAnyException();
    }
    assertThatCode(() -> PaymentsConfiguration.refuseDefaultAdminKeyOffLoopback("sk_admin_own_1", "0.0.0.0"))
        .doesNotThrowAnyException();
    assertThatCode(() -> PaymentsConfiguration.refuseDefaultAdminKeyOffLoopback("sk_admin_own_1", null))
        .doesNotThrowAnyException();
  }

  private String database() {
    return "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE";
  }
}
