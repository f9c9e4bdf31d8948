package dev.idem.outbox;

import java.util.Objects;
import java.util.Optional;

/**
 * A filter over the outbox for listing and bulk replay. Every criterion is optional; pages follow {@code seq}.
 *
 * <pre>{@code
 * OutboxPage page = outbox.list(OutboxQuery.status(OutboxStatus.DEAD).type("payment.succeeded").limit(50));
 * OutboxPage next = outbox.list(query.after(page.nextCursor().orElseThrow()));
 * }</pre>
 */
public final class OutboxQuery {
  /** The largest page. */
  public static final int MAX_LIMIT = 500;

  private final OutboxStatus status;
  private final String type;
  private final String destination;
  private final String aggregateType;
  private final String aggregateId;
  private final long afterSeq;
  private final int limit;

  private OutboxQuery(OutboxStatus status, String type, String destination, String aggregateType,
      String aggregateId, long afterSeq, int limit) {
    this.status = status;
    this.type = type;
    this.destination = destination;
    this.aggregateType = aggregateType;
    this.aggregateId = aggregateId;
    this.afterSeq = afterSeq;
    this.limit = limit;
  }

  /** Every event, 100 per page. */
  public static OutboxQuery all() {
    return new OutboxQuery(null, null, null, null, null, 0, 100);
  }

  /** Events in {@code status}, 100 per page. */
  public static OutboxQuery status(OutboxStatus status) {
    return all().withStatus(Objects.requireNonNull(status, "status"));
  }

  public OutboxQuery withStatus(OutboxStatus status) {
    return new OutboxQuery(status, type, destination, aggregateType, aggregateId, afterSeq, limit);
  }

  /** Only events of this type. */
  public OutboxQuery type(String type) {
    return new OutboxQuery(status, Limits.text("type", type, Limits.NAME), destination, aggregateType, aggregateId,
        afterSeq, limit);
  }

  /** Only events for this exact destination. */
  public OutboxQuery destination(String destination) {
    return new OutboxQuery(status, type, Limits.destination(destination), aggregateType, aggregateId, afterSeq, limit);
  }

  /** Only events of this aggregate. */
  public OutboxQuery aggregate(String aggregateType, String aggregateId) {
    return new OutboxQuery(status, type, destination, Limits.text("aggregateType", aggregateType,
        Limits.AGGREGATE_TYPE), Limits.text("aggregateId", aggregateId, Limits.NAME), afterSeq, limit);
  }

  /** The page after the row with this {@code seq} (a previous page's {@link OutboxPage#nextCursor()}). */
  public OutboxQuery after(long seq) {
    if (seq < 0) {
      throw new IllegalArgumentException("cursor must not be negative");
    }
    return new OutboxQuery(status, type, destination, aggregateType, aggregateId, seq, limit);
  }

  /** At most this many rows per page, 1 to {@value #MAX_LIMIT}. */
  public OutboxQuery limit(int limit) {
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", got " + limit);
    }
    return new OutboxQuery(status, type, destination, aggregateType, aggregateId, afterSeq, limit);
  }

  public Optional<OutboxStatus> status() {
    return Optional.ofNullable(status);
  }

  public Optional<String> type() {
    return Optional.ofNullable(type);
  }

  public Optional<String> destination() {
    return Optional.ofNullable(destination);
  }

  public Optional<String> aggregateType() {
    return Optional.ofNullable(aggregateType);
  }

  public Optional<String> aggregateId() {
    return Optional.ofNullable(aggregateId);
  }

  public long afterSeq() {
    return afterSeq;
  }

  public int limit() {
    return limit;
  }

  @Override
  public String toString() {
    return "OutboxQuery{status=" + status + ", type=" + type + ", destination=" + destination + ", aggregate="
        + aggregateType + '/' + aggregateId + ", after=" + afterSeq + ", limit=" + limit + '}';
  }
}
