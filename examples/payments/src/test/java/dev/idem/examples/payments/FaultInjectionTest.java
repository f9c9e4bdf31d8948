package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.examples.payments.provider.ChargeRequest;
import dev.idem.examples.payments.provider.FaultInjection;
import dev.idem.examples.payments.provider.PaymentProvider;
import dev.idem.examples.payments.provider.ProviderException;
import dev.idem.examples.payments.provider.ProviderFaults;
import dev.idem.examples.payments.provider.ProviderRejectedException;
import dev.idem.examples.payments.provider.ProviderTimeoutException;
import dev.idem.examples.payments.provider.ProviderUnavailableException;
import dev.idem.examples.payments.provider.RefundRequest;
import dev.idem.examples.payments.web.PaymentsProblems;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The simulated provider's faults, on an in-memory H2 database, without HTTP. */
class FaultInjectionTest {

  @Test
  void aSeededGeneratorReplaysTheSameFaults() throws Exception {
    List<String> first = outcomes(new Random(42));
    List<String> second = outcomes(new Random(42));

    assertThat(first).isEqualTo(second).contains("ok", "unavailable");
  }

  @Test
  void aTimeoutAfterCommitHasAppliedTheCharge() throws Exception {
    PaymentProvider provider = provider(new ProviderFaults(1, 0, 0), new Random(1));
    ChargeRequest request = new ChargeRequest("acct_t", 100, "EUR");

    assertThatThrownBy(() -> provider.charge("k1", request)).isInstanceOf(ProviderTimeoutException.class);
    provider.faults().set(ProviderFaults.none());
    String id = provider.charge("k1", request).id();

    assertThat(provider.chargesOf("acct_t", 10)).hasSize(1).allMatch(c -> c.id().equals(id));
    assertThat(provider.stats().duplicateChargeAttempts()).isEqualTo(1);
  }

  @Test
  void anOutageAppliesNothing() {
    PaymentProvider provider = provider(new ProviderFaults(0, 1, 0), new Random(1));

    assertThatThrownBy(() -> provider.charge("k1", new ChargeRequest("acct_u", 100, "EUR")))
        .isInstanceOf(ProviderUnavailableException.class);

    assertThat(provider.stats().charges()).isZero();
  }

  @Test
  void aRefusalIsForGoodAndAppliesNothing() throws Exception {
    PaymentProvider provider = provider(new ProviderFaults(0, 0, 0, 1), new Random(1));

    assertThatThrownBy(() -> provider.charge("k1", new ChargeRequest("acct_r", 100, "EUR")))
        .isInstanceOfSatisfying(ProviderRejectedException.class,
            e -> assertThat(e.problemCode()).isEqualTo(PaymentsProblems.PROVIDER_REFUSED));
    assertThat(provider.stats().charges()).isZero();
    provider.faults().set(ProviderFaults.none());
    String charge = provider.charge("k2", new ChargeRequest("acct_r", 100, "EUR")).id();
    provider.faults().set(new ProviderFaults(0, 0, 0, 1));

    assertThatThrownBy(() -> provider.refund("r1", new RefundRequest(charge, 50)))
        .isInstanceOf(ProviderRejectedException.class);
    assertThat(provider.stats().refunds()).isZero();
    assertThat(provider.faults().current().toJson()).containsEntry("provider_refusal_rate", 1.0);
  }

  @Test
  void faultsOutOfRangeAreRefusedNamingTheField() {
    assertThatThrownBy(() -> new ProviderFaults(-0.1, 0, 0)).hasMessageContaining("provider_timeout_after_commit_rate");
    assertThatThrownBy(() -> new ProviderFaults(0, Double.NaN, 0)).hasMessageContaining("provider_error_rate");
    assertThatThrownBy(() -> new ProviderFaults(0, 0, 60_001)).hasMessageContaining("provider_latency_ms");
    assertThatThrownBy(() -> new ProviderFaults(0, 0, 0, 1.5)).hasMessageContaining("provider_refusal_rate");
  }

  private static List<String> outcomes(Random random) throws ProviderException {
    PaymentProvider provider = provider(new ProviderFaults(0, 0.5, 0), random);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      try {
        provider.charge("k" + i, new ChargeRequest("acct_s", 100, "EUR"));
        out.add("ok");
      } catch (ProviderUnavailableException e) {
        out.add("unavailable");
      }
    }
    return out;
  }

  private static PaymentProvider provider(ProviderFaults faults, Random random) {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:provider-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    PaymentsSchema.createIfMissing(ds);
    return new PaymentProvider(ds, new FaultInjection(faults, random), Clock.systemUTC());
  }
}
