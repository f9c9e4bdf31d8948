package dev.idem.retry.internal;

import dev.idem.retry.RetryBudget;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link RetryBudget#tokenBucket(double, double)}. Lock-free: the token count is a {@code double} kept as raw bits in
 * an {@link AtomicLong} and updated by compare-and-set; nothing allocates.
 */
public final class TokenBucketRetryBudget implements RetryBudget {
  private final double maxTokens;
  private final double tokenRatio;
  private final double threshold;
  private final AtomicLong tokenBits;

  public TokenBucketRetryBudget(double maxTokens, double tokenRatio) {
    if (!(maxTokens > 0) || Double.isInfinite(maxTokens)) {
      throw new IllegalArgumentException("token bucket maxTokens must be > 0 and finite, was " + maxTokens);
    }
    if (!(tokenRatio > 0) || Double.isInfinite(tokenRatio)) {
      throw new IllegalArgumentException("token bucket tokenRatio must be > 0 and finite, was " + tokenRatio);
    }
    this.maxTokens = maxTokens;
    this.tokenRatio = tokenRatio;
    this.threshold = maxTokens / 2;
    this.tokenBits = new AtomicLong(Double.doubleToRawLongBits(maxTokens));
  }

  @Override
  public void onRequest() {}

  @Override
  public void onFailure() {
    add(-1.0);
  }

  @Override
  public void onSuccess() {
    add(tokenRatio);
  }

  private void add(double delta) {
    for (;;) {
      long bits = tokenBits.get();
      double next = Math.max(0.0, Math.min(maxTokens, Double.longBitsToDouble(bits) + delta));
      if (tokenBits.compareAndSet(bits, Double.doubleToRawLongBits(next))) {
        return;
      }
    }
  }

  @Override
  public boolean tryAcquireRetry() {
    return remaining() > threshold;
  }

  /** Takes one token by compare-and-set, if more than half remain: a hedge is an extra request. */
  @Override
  public boolean tryAcquireHedge() {
    for (;;) {
      long bits = tokenBits.get();
      double tokens = Double.longBitsToDouble(bits);
      if (!(tokens > threshold)) {
        return false;
      }
      if (tokenBits.compareAndSet(bits, Double.doubleToRawLongBits(Math.max(0.0, tokens - 1.0)))) {
        return true;
      }
    }
  }

  @Override
  public double remaining() {
    return Double.longBitsToDouble(tokenBits.get());
  }

  @Override
  public String toString() {
    return "RetryBudget[tokenBucket max=" + maxTokens + ", ratio=" + tokenRatio + ", tokens=" + remaining() + "]";
  }
}
