package dev.idem.spring.budget;

import dev.idem.servlet.budget.RetryBudgetFilter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code idem.server.retry-budget.*} properties of the server-side retry budget
 * ({@link RetryBudgetFilter}). Validated once at startup by {@link #validate()}; every message names the property.
 */
@ConfigurationProperties(prefix = "idem.server.retry-budget")
public class RetryBudgetProperties {
  /**
   * The default filter order, relative to {@code idem.filter.order}: after authentication (Spring Security's filter
   * chain is at -100) and the deadline filter (10 before the idempotency filter), so that unauthenticated and
   * already-expired retries are refused there and never take a retry's place in the share; before the idempotency
   * filter, which does the work.
   */
  public static final int DEFAULT_OFFSET = -5;

  /**
   * Whether retries past the share are refused. Off by default: it changes what clients see under load, so a
   * service turns it on knowingly, once its clients send the attempt header.
   */
  private boolean enabled = false;
  /** The largest share of served requests that may be retries over the window, 0..1. */
  private double maxRetryShare = RetryBudgetFilter.DEFAULT_MAX_RETRY_SHARE;
  /** The sliding window, in ten buckets; 100 ms to 1 h. */
  private Duration window = RetryBudgetFilter.DEFAULT_WINDOW;
  /** How many served requests the window must hold before any retry is refused. */
  private int minRequests = RetryBudgetFilter.DEFAULT_MIN_REQUESTS;
  /** The Retry-After of a refusal, rounded up to seconds; unset means the window. */
  private Duration retryAfter;
  /** The client's attempt-counter header (1 = first attempt). */
  private String attemptHeader = RetryBudgetFilter.DEFAULT_ATTEMPT_HEADER;
  /** Path prefixes (within the application) the budget applies to; empty means every path. */
  private List<String> pathPrefixes = new ArrayList<>();
  /**
   * The filter's order; must be lower than {@code idem.filter.order} so that shedding happens before any work. Unset:
   * {@code idem.filter.order} {@value #DEFAULT_OFFSET}.
   */
  private Integer order;

  /**
   * Checks every value.
   *
   * @throws IllegalStateException naming the first bad property and its value
   */
  public void validate() {
    String p = "idem.server.retry-budget.";
    if (!(maxRetryShare >= 0.0 && maxRetryShare <= 1.0)) {
      throw new IllegalStateException(p + "max-retry-share must be between 0 and 1 (0.2 is 20 %), got "
          + maxRetryShare);
    }
    if (window == null || window.compareTo(Duration.ofMillis(100)) < 0 || window.compareTo(Duration.ofHours(1)) > 0
        || window.toNanosPart() % 1_000_000 != 0) {
      throw new IllegalStateException(p + "window must be 100ms to 1h in whole milliseconds, got " + window);
    }
    if (minRequests < 0) {
      throw new IllegalStateException(p + "min-requests must be 0 or more, got " + minRequests);
    }
    if (retryAfter != null && (retryAfter.isNegative() || retryAfter.isZero()
        || retryAfter.compareTo(Duration.ofDays(1)) > 0)) {
      throw new IllegalStateException(p + "retry-after must be positive and at most 1d, got " + retryAfter);
    }
    if (attemptHeader == null || attemptHeader.isEmpty()
        || !attemptHeader.chars().allMatch(c -> c > 32 && c < 127 && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0)) {
      throw new IllegalStateException(p + "attempt-header must be an HTTP header name, got '" + attemptHeader + "'");
    }
    for (String prefix : pathPrefixes) {
      if (prefix == null || !prefix.startsWith("/") || prefix.contains("*")
          || prefix.chars().anyMatch(Character::isWhitespace)) {
        throw new IllegalStateException(p + "path-prefixes entries must start with '/' and hold no '*' or spaces,"
            + " got '" + prefix + "'");
      }
    }
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public double getMaxRetryShare() {
    return maxRetryShare;
  }

  public void setMaxRetryShare(double maxRetryShare) {
    this.maxRetryShare = maxRetryShare;
  }

  public Duration getWindow() {
    return window;
  }

  public void setWindow(Duration window) {
    this.window = window;
  }

  public int getMinRequests() {
    return minRequests;
  }

  public void setMinRequests(int minRequests) {
    this.minRequests = minRequests;
  }

  public Duration getRetryAfter() {
    return retryAfter;
  }

  public void setRetryAfter(Duration retryAfter) {
    this.retryAfter = retryAfter;
  }

  public String getAttemptHeader() {
    return attemptHeader;
  }

  public void setAttemptHeader(String attemptHeader) {
    this.attemptHeader = attemptHeader;
  }

  public List<String> getPathPrefixes() {
    return pathPrefixes;
  }

  public void setPathPrefixes(List<String> pathPrefixes) {
    this.pathPrefixes = pathPrefixes == null ? new ArrayList<>() : new ArrayList<>(pathPrefixes);
  }

  public Integer getOrder() {
    return order;
  }

  public void setOrder(Integer order) {
    this.order = order;
  }

  /** The order to register the filter with, given the idempotency filter's. */
  public int effectiveOrder(int idempotencyFilterOrder) {
    return order != null ? order : idempotencyFilterOrder + DEFAULT_OFFSET;
  }
}
