package dev.idem.examples.payments.outbox;

import dev.idem.examples.payments.inbox.InboxCounts;
import dev.idem.examples.payments.inbox.ProviderConfirmations;
import dev.idem.examples.payments.inbox.ProviderWebhookController;
import dev.idem.examples.payments.provider.ProviderWebhookTransport;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.PaymentsProblems;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxAttempt;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.servlet.Problem;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Operator routes over the outbox and the inbox (admin access, like every {@code /admin} route):
 *
 * <ul>
 *   <li>{@code GET /admin/outbox?status=pending|delivered|dead|discarded[&type=][&cursor=][&limit=]}: a page of
 *       events by age, each with its attempt history; {@code next} is the following page's cursor;
 *   <li>{@code GET /admin/outbox/{id}}: one event with its attempt history;
 *   <li>{@code POST /admin/outbox/{id}/replay}: send a dead (or delivered, or discarded) event again;
 *   <li>{@code POST /admin/outbox/replay?status=dead[&type=]}: replay every match, answering how many;
 *   <li>{@code POST /admin/outbox/{id}/discard}: give up on a dead or pending event;
 *   <li>{@code GET /admin/outbox/stats}: events per status and the age of the oldest pending one;
 *   <li>{@code GET /admin/provider/webhooks}: the provider's webhooks, sent and re-sent, and what the inbox made of
 *       them.
 * </ul>
 *
 * An unknown event id answers 404; a bad status, type, cursor or limit a 400 problem.
 */
@RestController
@RequestMapping(produces = MediaType.APPLICATION_JSON_VALUE)
public class OutboxAdminController {
  private static final JsonMapper PAYLOADS = JsonMapper.builder().build();

  private final Outbox outbox;
  private final OutboxRelay relay;
  private final JdbcInboxStore inbox;
  private final InboxCounts inboxCounts;
  private final ProviderWebhookTransport providerTransport;
  private final ProviderConfirmations confirmations;
  private final DataSource dataSource;

  public OutboxAdminController(Outbox outbox, OutboxRelay relay, JdbcInboxStore inbox, InboxCounts inboxCounts,
      ProviderWebhookTransport providerTransport, ProviderConfirmations confirmations, DataSource dataSource) {
    this.outbox = outbox;
    this.relay = relay;
    this.inbox = inbox;
    this.inboxCounts = inboxCounts;
    this.providerTransport = providerTransport;
    this.confirmations = confirmations;
    this.dataSource = dataSource;
  }

  @GetMapping("/admin/outbox")
  public Map<String, Object> list(
      @RequestParam(name = "status", required = false) String status,
      @RequestParam(name = "type", required = false) String type,
      @RequestParam(name = "cursor", required = false) String cursor,
      @RequestParam(name = "limit", required = false) String limit) {
    OutboxQuery query = OutboxQuery.all().limit(limit(limit));
    Optional<OutboxStatus> wanted = status(status, false);
    if (wanted.isPresent()) {
      query = query.withStatus(wanted.get());
    }
    query = withType(query, type);
    if (cursor != null && !cursor.isEmpty()) {
      query = query.after(cursor(cursor));
    }
    OutboxPage page = outbox.list(query);
    List<Map<String, Object>> events = new ArrayList<>();
    page.entries().forEach(e -> events.add(toJson(e)));
    return Json.document("status", wanted.map(s -> s.name().toLowerCase(Locale.ROOT)).orElse(null),
        "events", events,
        "next", page.nextCursor().isPresent() ? Long.toString(page.nextCursor().getAsLong()) : null);
  }

  @GetMapping("/admin/outbox/stats")
  public Map<String, Object> stats() {
    OutboxStats stats = outbox.stats();
    Map<String, Object> counts = Json.document();
    for (OutboxStatus s : OutboxStatus.values()) {
      counts.put(s.name().toLowerCase(Locale.ROOT), stats.count(s));
    }
    return Json.document("counts", counts, "oldest_pending_age_ms",
        stats.oldestPendingAge().map(d -> d.toMillis()).orElse(null), "relay", relay.name(),
        "relay_running", relay.isRunning());
  }

  @GetMapping("/admin/outbox/{id}")
  public Map<String, Object> get(@PathVariable("id") String id) {
    return toJson(find(id));
  }

  @PostMapping("/admin/outbox/{id}/replay")
  public Map<String, Object> replay(@PathVariable("id") String id) {
    OutboxEntry entry = find(id);
    if (!outbox.replay(entry.id())) {
      throw new ApiProblem(Problem.of(PaymentsProblems.OUTBOX_PENDING)
          .withDetail("event " + id + " is pending: the relay sends it without a replay"));
    }
    relay.wakeUp();
    return toJson(find(id));
  }

  @PostMapping("/admin/outbox/replay")
  public Map<String, Object> replayAll(
      @RequestParam(name = "status", required = false) String status,
      @RequestParam(name = "type", required = false) String type) {
    OutboxStatus wanted = status(status, true).orElseThrow();
    if (wanted == OutboxStatus.PENDING) {
      throw ApiProblem.invalid("status", "pending events are sent without a replay; replay dead, delivered or"
          + " discarded events");
    }
    int replayed = outbox.replayAll(withType(OutboxQuery.status(wanted).limit(OutboxQuery.MAX_LIMIT), type));
    if (replayed > 0) {
      relay.wakeUp();
    }
    return Json.document("status", wanted.name().toLowerCase(Locale.ROOT), "type", type, "replayed", replayed);
  }

  @PostMapping("/admin/outbox/{id}/discard")
  public Map<String, Object> discard(@PathVariable("id") String id) {
    OutboxEntry entry = find(id);
    if (!outbox.discard(entry.id())) {
      OutboxEntry now = find(id);
      if (now.status() == OutboxStatus.PENDING) {
        throw new ApiProblem(Problem.of(PaymentsProblems.OUTBOX_IN_FLIGHT)
            .withDetail("event " + id + " is being sent by a relay; try again after " + now.leaseUntil()));
      }
      throw new ApiProblem(Problem.of(PaymentsProblems.OUTBOX_FINISHED)
          .withDetail("event " + id + " is " + now.status().name().toLowerCase(Locale.ROOT)
              + "; only dead or pending events can be discarded"));
    }
    return toJson(find(id));
  }

  @GetMapping("/admin/provider/webhooks")
  public Map<String, Object> providerWebhooks() throws SQLException {
    long received;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + inbox.table() + " WHERE consumer = ?")) {
      ps.setString(1, ProviderWebhookController.CONSUMER);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        received = rs.getLong(1);
      }
    }
    Map<String, Object> out = Json.document(
        "delivered", providerTransport.delivered(),
        "resent", providerTransport.resent(),
        "inbox_records", received,
        "inbox_processed", inboxCounts.processed(),
        "inbox_duplicates", inboxCounts.duplicates(),
        "inbox_payload_mismatches", inboxCounts.payloadMismatches());
    out.putAll(confirmations.stats());
    return out;
  }

  // ---------------------------------------------------------------- parsing

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

  private static ApiProblem notFound(String id) {
    return ApiProblem.notFound("outbox_event", "no outbox event " + id);
  }

  private static Optional<OutboxStatus> status(String status, boolean required) {
    if (status == null || status.isEmpty()) {
      if (required) {
        throw ApiProblem.invalid("status", "status is required: dead, delivered or discarded");
      }
      return Optional.empty();
    }
    switch (status.toLowerCase(Locale.ROOT)) {
      case "pending":
        return Optional.of(OutboxStatus.PENDING);
      case "delivered":
        return Optional.of(OutboxStatus.DELIVERED);
      case "dead":
        return Optional.of(OutboxStatus.DEAD);
      case "discarded":
        return Optional.of(OutboxStatus.DISCARDED);
      default:
        throw ApiProblem.invalid("status", "status must be pending, delivered, dead or discarded");
    }
  }

  private static OutboxQuery withType(OutboxQuery query, String type) {
    if (type == null || type.isEmpty()) {
      return query;
    }
    try {
      return query.type(type);
    } catch (IllegalArgumentException e) {
      throw ApiProblem.invalid("type", "type must be an event type of 1 to 255 characters");
    }
  }

  private static int limit(String limit) {
    if (limit == null || limit.isEmpty()) {
      return 50;
    }
    try {
      int n = Integer.parseInt(limit);
      if (n >= 1 && n <= OutboxQuery.MAX_LIMIT) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw ApiProblem.invalid("limit", "limit must be an integer from 1 to " + OutboxQuery.MAX_LIMIT);
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
    throw ApiProblem.invalid("cursor", "cursor must be the next cursor of a previous page");
  }

  // ---------------------------------------------------------------- documents

  private static Map<String, Object> toJson(OutboxEntry e) {
    List<Map<String, Object>> history = new ArrayList<>();
    for (OutboxAttempt a : e.history()) {
      history.add(Json.document("attempt", a.attempt(), "at", a.at().toString(), "error", a.error(),
          "response_code", a.responseCode()));
    }
    return Json.document(
        "id", e.id().toString(),
        "type", e.type(),
        "aggregate_type", e.aggregateType(),
        "aggregate_id", e.aggregateId(),
        "destination", e.destination(),
        "status", e.status().name().toLowerCase(Locale.ROOT),
        "attempts", e.attempts(),
        "attempts_since_replay", e.attemptsSinceReplay(),
        "available_at", time(e.availableAt()),
        "lease_owner", e.leaseOwner(),
        "lease_until", time(e.leaseUntil()),
        "last_error", e.lastError(),
        "created_at", time(e.createdAt()),
        "finished_at", time(e.finishedAt()),
        "payload", payload(e.payload()),
        "history", history);
  }

  /** The payload as JSON when it parses (it always should), else as the stored text. */
  private static Object payload(String payload) {
    try {
      JsonNode node = PAYLOADS.readTree(payload);
      return node == null ? payload : node;
    } catch (RuntimeException e) {
      return payload;
    }
  }

  private static String time(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
