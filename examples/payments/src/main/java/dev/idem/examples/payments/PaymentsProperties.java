package dev.idem.examples.payments;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The service's settings under {@code payments.*} (API keys are read separately, see
 * {@link dev.idem.examples.payments.auth.ApiKeys}).
 *
 * @param adminKey the bearer token of the admin routes ({@code payments.admin-key}, default {@code sk_admin})
 * @param adminAllowLoopback whether admin routes are open to loopback callers without a token (default true)
 * @param provider the initial faults, the random seed and the webhooks of the simulated provider
 * @param outbox the relay that sends events, and the purge of finished events and old inbox records
 * @param webhooks the tenants' webhook endpoints
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(
    @DefaultValue("sk_admin") String adminKey,
    @DefaultValue("true") boolean adminAllowLoopback,
    @DefaultValue Provider provider,
    @DefaultValue Outbox outbox,
    @DefaultValue Webhooks webhooks) {

  /**
   * The simulated provider's initial faults ({@code PUT /admin/faults} changes them at run time) and its webhooks.
   *
   * @param timeoutAfterCommitRate probability that a call commits and then times out
   * @param errorRate probability that a call fails before doing anything
   * @param latencyMs delay added to every call
   * @param seed seed of the fault randomness (and, derived from it, of the webhooks re-sent); unset means a random
   *     seed
   * @param webhookSecret the {@code whsec_...} secret the provider signs its webhooks with and the service verifies
   *     them with ({@code payments.provider.webhook-secret}); unset means a new random one at every start
   * @param webhookUrl where the provider sends its webhooks; unset means this service's own
   *     {@code POST /webhooks/provider} on 127.0.0.1 and the port it listens on
   * @param webhookResendRatio the fraction (0 to 1, default 0.2) of webhooks the provider sends twice on purpose,
   *     as real providers do now and then
   */
  public record Provider(
      @DefaultValue("0") double timeoutAfterCommitRate,
      @DefaultValue("0") double errorRate,
      @DefaultValue("0") long latencyMs,
      Long seed,
      String webhookSecret,
      String webhookUrl,
      @DefaultValue("0.2") double webhookResendRatio) {
    public Provider {
      if (!(webhookResendRatio >= 0 && webhookResendRatio <= 1)) {
        throw new IllegalArgumentException("payments.provider.webhook-resend-ratio must be from 0 to 1, got "
            + webhookResendRatio);
      }
    }
  }

  /**
   * The outbox relay ({@code payments.outbox.*}): it sends the events that {@code POST /payments} and
   * {@code POST /refunds} write, and the provider's webhooks.
   *
   * @param enabled whether the relay and the purge run (default true); when false, events wait in the outbox
   * @param threads relay worker threads (default 1)
   * @param batchSize events claimed per cycle (default 100)
   * @param pollInterval how long an idle worker waits before looking again (default 250 ms)
   * @param maxAttempts attempts before an event is dead (default 12)
   * @param backoffInitial the delay after a first failed attempt (default 1 s), doubling up to {@code backoffMax}
   * @param backoffMax the longest delay between attempts (default 1 h)
   * @param lease how long a relay holds the events it claimed (default 60 s; longer than a webhook's timeout)
   * @param retention how long delivered and discarded events are kept (default 7 days)
   * @param inboxRetention how long the records of received provider webhooks are kept (default 14 days)
   * @param purgeInterval how often both are purged (default 10 min)
   */
  public record Outbox(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("1") int threads,
      @DefaultValue("100") int batchSize,
      @DefaultValue("250ms") Duration pollInterval,
      @DefaultValue("12") int maxAttempts,
      @DefaultValue("1s") Duration backoffInitial,
      @DefaultValue("1h") Duration backoffMax,
      @DefaultValue("60s") Duration lease,
      @DefaultValue("7d") Duration retention,
      @DefaultValue("14d") Duration inboxRetention,
      @DefaultValue("10m") Duration purgeInterval) {
    public Outbox {
      positive("payments.outbox.backoff-initial", backoffInitial);
      positive("payments.outbox.backoff-max", backoffMax);
      positive("payments.outbox.purge-interval", purgeInterval);
      if (backoffMax.compareTo(backoffInitial) < 0) {
        throw new IllegalArgumentException("payments.outbox.backoff-max (" + backoffMax
            + ") must not be shorter than payments.outbox.backoff-initial (" + backoffInitial + ")");
      }
      if (retention.isNegative() || inboxRetention.isNegative()) {
        throw new IllegalArgumentException("payments.outbox.retention and payments.outbox.inbox-retention must not"
            + " be negative");
      }
      if (inboxRetention.compareTo(retention) < 0) {
        // a delivered event can be replayed until it is purged: its inbox record must outlive it
        throw new IllegalArgumentException("payments.outbox.inbox-retention (" + inboxRetention + ") must not be"
            + " shorter than payments.outbox.retention (" + retention + ")");
      }
    }
  }

  /**
   * The tenants' webhook endpoints ({@code payments.webhooks.*}).
   *
   * @param maxEndpointsPerTenant enabled endpoints a tenant may have (default 20)
   * @param timeout how long one delivery may take, connecting included (default 15 s)
   * @param allowPrivateAddresses whether endpoints may be on loopback or private networks (default false; this
   *     service's own configuration turns it on, because it runs on one machine with local subscribers)
   */
  public record Webhooks(
      @DefaultValue("20") int maxEndpointsPerTenant,
      @DefaultValue("15s") Duration timeout,
      @DefaultValue("false") boolean allowPrivateAddresses) {
    public Webhooks {
      if (maxEndpointsPerTenant < 1 || maxEndpointsPerTenant > 1000) {
        throw new IllegalArgumentException("payments.webhooks.max-endpoints-per-tenant must be 1 to 1000, got "
            + maxEndpointsPerTenant);
      }
      positive("payments.webhooks.timeout", timeout);
    }
  }

  private static void positive(String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
    }
  }
}
