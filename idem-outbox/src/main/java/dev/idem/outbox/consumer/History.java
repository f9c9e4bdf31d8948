package dev.idem.outbox.consumer;

/**
 * What came before a failure, as {@link ConsumerEngine#decide} needs it.
 *
 * @param failures this message's failures counted before this one (RabbitMQ: counted in memory or the quorum queue's
 *     {@code x-delivery-count}; NATS: its deliveries before this one; Kafka: counted in memory)
 * @param contentions this message's passing conflicts retried without counting, before this one
 * @param outages the consumer's database outages in a row before this one (0 after any message got through)
 */
public record History(int failures, int contentions, int outages) {
  /** A message's first try on a consumer whose database answered last time. */
  public static final History NONE = new History(0, 0, 0);

  public History {
    if (failures < 0 || contentions < 0 || outages < 0) {
      throw new IllegalArgumentException("counts must not be negative, got " + failures + ", " + contentions + ", "
          + outages);
    }
  }

  /** A message that failed {@code failures} times before, on a consumer whose database answered last time. */
  public static History of(long failures) {
    return new History(clamp(failures), 0, 0);
  }

  /** This history with the consumer's {@code outages} in a row. */
  public History withOutages(int outages) {
    return new History(failures, contentions, outages);
  }

  /** What comes before the next failure, after {@code decision} was taken on this history. */
  public History next(Decision decision) {
    if (decision.action() == Action.PAUSE) {
      return new History(failures, contentions, clamp(outages + 1L));
    }
    if (decision.reason() == Reason.CONTENTION) {
      return new History(failures, clamp(contentions + 1L), 0);
    }
    return new History(decision.counted() ? clamp(failures + 1L) : failures, contentions, 0);
  }

  private static int clamp(long n) {
    return (int) Math.max(0, Math.min(Integer.MAX_VALUE, n));
  }
}
