package dev.idem.spring.deadline;

import dev.idem.core.protocol.IdemHeaders;
import java.time.Duration;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code idem.server.deadline.*} properties. Validated once at startup by {@link #validate(int)}. */
@ConfigurationProperties(prefix = "idem.server.deadline")
public class IdemDeadlineProperties {
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}");
  private static final Duration HOUR = Duration.ofHours(1);

  /**
   * Register the deadline filter: requests that arrive with no time left are refused with 503
   * {@code DEPENDENCY.timeout}, and handlers (and idem-client calls they make) see the client's deadline.
   */
  private boolean enabled = true;
  /** The request header with the client's remaining milliseconds. */
  private String header = IdemHeaders.REQUEST_TIMEOUT;
  /**
   * The longest deadline a request gets: caps the client's budget and is the deadline of requests without the
   * header. Empty (the default): no cap, and no deadline without the header.
   */
  private Duration max;
  /** Requests arriving with less than this are refused. 1 ms refuses only {@code Request-Timeout: 0}. */
  private Duration minRemaining = Duration.ofMillis(1);
  /**
   * The filter's order; must be lower (earlier) than {@code idem.filter.order}. Empty (the default): 10 before the
   * idempotency filter.
   */
  private Integer order;

  /**
   * Checks every setting against the idempotency filter's order; the message names the property and the bad value.
   *
   * @throws IllegalStateException on a bad setting
   */
  public void validate(int idempotencyFilterOrder) {
    if (header == null || !HEADER_NAME.matcher(header).matches()) {
      throw new IllegalStateException("idem.server.deadline.header must be an HTTP field name (1 to 64 token"
          + " characters), got '" + header + "'");
    }
    if (max != null && (max.toMillis() < 1 || max.compareTo(HOUR) > 0)) {
      throw new IllegalStateException("idem.server.deadline.max must be 1ms to 1h (or unset), got " + max);
    }
    if (minRemaining == null || minRemaining.isNegative() || minRemaining.compareTo(HOUR) > 0) {
      throw new IllegalStateException("idem.server.deadline.min-remaining must be 0ms to 1h, got " + minRemaining);
    }
    if (max != null && max.compareTo(minRemaining) < 0) {
      throw new IllegalStateException("idem.server.deadline.max (" + max + ") must not be below"
          + " idem.server.deadline.min-remaining (" + minRemaining + ")");
    }
    if (order != null && order >= idempotencyFilterOrder) {
      throw new IllegalStateException("idem.server.deadline.order must be lower than idem.filter.order ("
          + idempotencyFilterOrder + ") so that an expired request creates no idempotency record, got " + order);
    }
  }

  /** The order to register the filter with: {@link #getOrder()} or 10 before the idempotency filter. */
  public int effectiveOrder(int idempotencyFilterOrder) {
    if (order != null) {
      return order;
    }
    return idempotencyFilterOrder < Integer.MIN_VALUE + 10 ? Integer.MIN_VALUE : idempotencyFilterOrder - 10;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getHeader() {
    return header;
  }

  public void setHeader(String header) {
    this.header = header;
  }

  public Duration getMax() {
    return max;
  }

  public void setMax(Duration max) {
    this.max = max;
  }

  public Duration getMinRemaining() {
    return minRemaining;
  }

  public void setMinRemaining(Duration minRemaining) {
    this.minRemaining = minRemaining;
  }

  public Integer getOrder() {
    return order;
  }

  public void setOrder(Integer order) {
    this.order = order;
  }
}
