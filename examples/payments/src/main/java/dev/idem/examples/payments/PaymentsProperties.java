package dev.idem.examples.payments;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The service's settings under {@code payments.*} (API keys are read separately, see
 * {@link dev.idem.examples.payments.auth.ApiKeys}).
 *
 * @param adminKey the bearer token of the admin routes ({@code payments.admin-key}, default {@code sk_admin})
 * @param adminAllowLoopback whether admin routes are open to loopback callers without a token (default true)
 * @param provider the initial faults and the random seed of the simulated provider
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(
    @DefaultValue("sk_admin") String adminKey,
    @DefaultValue("true") boolean adminAllowLoopback,
    @DefaultValue Provider provider) {

  /**
   * The simulated provider's initial faults ({@code PUT /admin/faults} changes them at run time).
   *
   * @param timeoutAfterCommitRate probability that a call commits and then times out
   * @param errorRate probability that a call fails before doing anything
   * @param latencyMs delay added to every call
   * @param seed seed of the fault randomness; unset means a random seed
   */
  public record Provider(
      @DefaultValue("0") double timeoutAfterCommitRate,
      @DefaultValue("0") double errorRate,
      @DefaultValue("0") long latencyMs,
      Long seed) {}
}
