package dev.idem.console.internal;

import static dev.idem.console.internal.ConsoleProblems.invalid;
import static dev.idem.console.internal.Params.time;

import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxAttempt;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxSummary;
import dev.idem.outbox.OutboxSummaryPage;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The outbox's routes: events by status (the dead letters among them) with their attempt history, counts, and the
 * replay and discard of events. Loaded only when the console has an outbox, so that idem-outbox stays optional.
 * Thread-safe.
 */
public final class OutboxRoutes {
  private final Outbox outbox;
  private final Supplier<OutboxRelay> relay;

  /** @param relay the relay to wake after a replay (it may answer null) */
  public OutboxRoutes(Outbox outbox, Supplier<OutboxRelay> relay) {
    this.outbox = outbox;
    this.relay = relay;
  }

  private void wakeUp() {
    OutboxRelay r = relay.get();
    if (r != null) {
      r.wakeUp();
    }
  }

  /**
   * A page of events by age, without their payloads, which the store leaves in the database (their size as stored
   * instead); {@code next} is the following page's cursor.
   */
  public Map<String, Object> list(HttpServletRequest request) {
    OutboxQuery query = OutboxQuery.all().limit(Params.integer(request, "limit", 50, 1, OutboxQuery.MAX_LIMIT));
    Optional<OutboxStatus> wanted = status(Params.optional(request, "status"));
    if (wanted.isPresent()) {
      query = query.withStatus(wanted.get());
    }
    query = withType(query, Params.optional(request, "type"));
    String cursor = Params.optional(request, "cursor");
    if (cursor != null) {
      query = query.after(cursor(cursor));
    }
    OutboxSummaryPage page = outbox.summaries(query);
    List<Map<String, Object>> events = new ArrayList<>();
    page.entries().forEach(e -> events.add(toJson(e)));
    return Json.document("status", wanted.map(s -> name(s)).orElse(null), "events", events,
        "next", page.nextCursor().isPresent() ? Long.toString(page.nextCursor().getAsLong()) : null);
  }

  /** Events per status, the age of the oldest pending one, and the relay. */
  public Map<String, Object> stats() {
    OutboxStats stats = outbox.stats();
    Map<String, Object> counts = Json.document();
    for (OutboxStatus s : OutboxStatus.values()) {
      counts.put(name(s), stats.count(s));
    }
    OutboxRelay r = relay.get();
    return Json.document("counts", counts, "oldest_pending_age_ms",
        stats.oldestPendingAge().map(d -> d.toMillis()).orElse(null),
        "relay", r == null ? null : r.name(), "relay_running", r != null && r.isRunning());
  }

  /** One event with its attempt history. */
  public Map<String, Object> get(String id) {
    return toJson(find(id));
  }

  /** Sends a dead, delivered or discarded event again. */
  public Map<String, Object> replay(String id) {
    OutboxEntry entry = find(id);
    if (!outbox.replay(entry.id())) {
      throw new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.OUTBOX_PENDING)
          .withDetail("event " + id + " is pending: the relay sends it without a replay"));
    }
    wakeUp();
    return toJson(find(id));
  }

  /**
   * Replays every dead event, of a type if given; answers how many. Only dead events: a bulk replay of delivered or
   * discarded ones would send again what was sent or given up on purpose, which the console leaves to one event at a
   * time. The outbox replays in batches of {@link OutboxQuery#MAX_LIMIT}, each its own transaction, until none is
   * left: on this request's thread, however many there are.
   */
  public Map<String, Object> replayAll(HttpServletRequest request) {
    String status = Params.optional(request, "status");
    if (status == null || !status.toLowerCase(Locale.ROOT).equals(name(OutboxStatus.DEAD))) {
      throw invalid("status", "status=dead is required: a bulk replay sends dead letters again; replay a delivered"
          + " or discarded event one at a time");
    }
    OutboxStatus wanted = OutboxStatus.DEAD;
    String type = Params.optional(request, "type");
    int replayed = outbox.replayAll(withType(OutboxQuery.status(wanted).limit(OutboxQuery.MAX_LIMIT), type));
    if (replayed > 0) {
      wakeUp();
    }
    return Json.document("status", name(wanted), "type", type, "replayed", replayed);
  }

  /** Gives up on a dead or pending event. */
  public Map<String, Object> discard(String id) {
    OutboxEntry entry = find(id);
    if (!outbox.discard(entry.id())) {
      OutboxEntry now = find(id);
      if (now.status() == OutboxStatus.PENDING) {
        throw new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.OUTBOX_IN_FLIGHT)
            .withDetail("event " + id + " is being sent by a relay; try again after " + now.leaseUntil()));
      }
      throw new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.OUTBOX_FINISHED)
          .withDetail("event " + id + " is " + name(now.status()) + "; only dead or pending events can be discarded"));
    }
    return toJson(find(id));
  }

  private OutboxEntry find(String id) {
    UUID uuid;
    try {
      uuid = UUID.fromString(id);
    } catch (IllegalArgumentException e) {
      throw notFound(id);
    }
    if (!uuid.toString().equalsIgnoreCase(id)) {
      throw notFound(id);
    }
    return outbox.find(uuid).orElseThrow(() -> notFound(id));
  }

  private static ConsoleProblems.Refusal notFound(String id) {
    return ConsoleProblems.notFound("outbox_event", "no outbox event " + (id.length() > 64 ? "of that id" : id));
  }

  private static Optional<OutboxStatus> status(String status) {
    if (status == null) {
      return Optional.empty();
    }
    for (OutboxStatus s : OutboxStatus.values()) {
      if (name(s).equals(status.toLowerCase(Locale.ROOT))) {
        return Optional.of(s);
      }
    }
    throw invalid("status", "status must be pending, delivered, dead or discarded");
  }

  private static OutboxQuery withType(OutboxQuery query, String type) {
    if (type == null) {
      return query;
    }
    try {
      return query.type(type);
    } catch (IllegalArgumentException e) {
      throw invalid("type", "type must be an event type of 1 to 255 characters");
    }
  }

  private static long cursor(String cursor) {
    try {
      long seq = Long.parseLong(cursor);
      if (seq >= 0) {
        return seq;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw invalid("cursor", "cursor must be the next cursor of a previous page");
  }

  private static String name(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  /** One event as its own view shows it: the size of its payload opened, never the payload. */
  private static Map<String, Object> toJson(OutboxEntry e) {
    return toJson(e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.destination(), e.status(), e.attempts(),
        e.attemptsSinceReplay(), e.availableAt(), e.leaseOwner(), e.leaseUntil(), e.lastError(), e.createdAt(),
        e.finishedAt(), OutboxSummary.utf8Length(e.payload()), e.payloadSealed(), e.history());
  }

  /** One event as a listing shows it: the size of its payload as stored (sealed, for an encrypted route). */
  private static Map<String, Object> toJson(OutboxSummary e) {
    return toJson(e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.destination(), e.status(), e.attempts(),
        e.attemptsSinceReplay(), e.availableAt(), e.leaseOwner(), e.leaseUntil(), e.lastError(), e.createdAt(),
        e.finishedAt(), e.payloadBytes(), e.payloadSealed(), e.history());
  }

  private static Map<String, Object> toJson(UUID id, String type, String aggregateType, String aggregateId,
      String destination, OutboxStatus status, int attempts, int attemptsSinceReplay, Instant availableAt,
      String leaseOwner, Instant leaseUntil, String lastError, Instant createdAt, Instant finishedAt,
      long payloadBytes, boolean payloadSealed, List<OutboxAttempt> attemptHistory) {
    List<Map<String, Object>> history = new ArrayList<>();
    for (OutboxAttempt a : attemptHistory) {
      history.add(Json.document("attempt", a.attempt(), "at", a.at().toString(), "error", a.error(),
          "response_code", a.responseCode()));
    }
    return Json.document(
        "id", id.toString(),
        "type", type,
        "aggregate_type", aggregateType,
        "aggregate_id", aggregateId,
        "destination", destination,
        "status", name(status),
        "attempts", attempts,
        "attempts_since_replay", attemptsSinceReplay,
        "available_at", time(availableAt),
        "lease_owner", leaseOwner,
        "lease_until", time(leaseUntil),
        "last_error", lastError,
        "created_at", time(createdAt),
        "finished_at", time(finishedAt),
        "payload_bytes", payloadBytes,
        "payload_sealed", payloadSealed,
        "history", history);
  }
}
