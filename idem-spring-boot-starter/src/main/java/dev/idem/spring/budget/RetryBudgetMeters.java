package dev.idem.spring.budget;

import dev.idem.servlet.budget.RetryBudgetFilter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The server retry budget's meters, read from the filter's own counts (nothing is added on the request path), tagged
 * with {@code instance} (the filter's name, {@code idem.name}):
 *
 * <ul>
 *   <li>{@code idem.server.retry.share} (gauge, 0..1): admitted retries over served requests in the window
 *   <li>{@code idem.server.retries.shed} (counter): retries refused with 503 {@code TRANSIENT.retry_budget_exhausted}
 *   <li>{@code idem.server.retries.admitted} (counter): retries let through to the application
 * </ul>
 */
public final class RetryBudgetMeters {
  /** The gauge of the retry share. */
  public static final String SHARE = "idem.server.retry.share";
  /** The counter of refused retries. */
  public static final String SHED = "idem.server.retries.shed";
  /** The counter of admitted retries. */
  public static final String ADMITTED = "idem.server.retries.admitted";

  /** Registers the three meters of {@code filter} in {@code registry}. */
  public RetryBudgetMeters(MeterRegistry registry, RetryBudgetFilter filter) {
    Gauge.builder(SHARE, filter, RetryBudgetFilter::retryShare).strongReference(true)
        .description("Share of the requests served over the retry budget's window that were retries")
        .tag("instance", filter.name()).register(registry);
    FunctionCounter.builder(SHED, filter, f -> f.shedRetries())
        .description("Retries refused by the server retry budget (503 TRANSIENT.retry_budget_exhausted)")
        .tag("instance", filter.name()).register(registry);
    FunctionCounter.builder(ADMITTED, filter, f -> f.admittedRetries())
        .description("Retries admitted by the server retry budget")
        .tag("instance", filter.name()).register(registry);
  }
}
