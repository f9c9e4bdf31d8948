package dev.idem.examples.payments.console;

import dev.idem.core.Idem;
import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Scope;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.examples.payments.admin.RecordCursor;
import dev.idem.examples.payments.admin.RecordJson;
import dev.idem.examples.payments.admin.RecordResolutions;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.examples.payments.web.PaymentsProblems;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * The routes the console needs beyond the rest of the admin API, open only to the admin key ({@link ConsoleAccess}):
 *
 * <ul>
 *   <li>{@code GET /admin/console/session}: whether the key is the admin key (the login's check);
 *   <li>{@code GET /admin/console/records?state=in_progress|completed|failed|any&key=&limit=&after=}: records of
 *       every tenant, filtered by state and by a part of their key, with the lease age of in-progress ones;
 *   <li>{@code DELETE /admin/console/records?scope=&operation=&key=&version=&force=}: evicts one record, if it is
 *       still the version the operator saw and no worker holds a live lease on it (unless forced);
 *   <li>{@code POST /admin/console/records/resolve?scope=&operation=&key=&version=}: decides an uncertain record
 *       (complete, fail or retry, with a reason; {@link RecordResolutions}), if it is still the version the operator
 *       saw; {@code GET /admin/console/records/history?scope=&operation=&key=}: its audit;
 *   <li>{@code GET /admin/console/metrics}: the counts behind the charts.
 * </ul>
 */
@RestController
@RequestMapping(path = "/admin/console", produces = MediaType.APPLICATION_JSON_VALUE)
public class ConsoleController {
  private static final int MAX_LIMIT = 200;
  private static final int MAX_KEY_PART = 255;

  private final IdempotencyStore store;
  private final RecordSearch search;
  private final ConsoleMetrics metrics;
  private final Clock clock;
  private final RecordResolutions resolutions;
  private final Json json;

  ConsoleController(Idem idem, RecordSearch search, ConsoleMetrics metrics, Clock clock,
      RecordResolutions resolutions, Json json) {
    this.resolutions = resolutions;
    this.json = json;
    // the Idem's store: it opens what encryption at rest seals (checkpoints, answers)
    this.store = idem.store();
    this.search = search;
    this.metrics = metrics;
    this.clock = clock;
  }

  @GetMapping("/session")
  public Map<String, Object> session() {
    return Json.document("admin", true, "store", store.name());
  }

  /**
   * A page of records ordered by (scope, operation, key). Without {@code key} and with one state, the store's
   * {@link IdempotencyStore#admin()} lists them; with a key part or {@code state=any}, the table is searched.
   * {@code next} is the cursor of the following page, or {@code null} on the last.
   */
  @GetMapping("/records")
  public Map<String, Object> records(
      @RequestParam(name = "state", defaultValue = "in_progress") String state,
      @RequestParam(name = "key", required = false) String key,
      @RequestParam(name = "limit", defaultValue = "50") int limit,
      @RequestParam(name = "after", required = false) String after) {
    Optional<RecordState> wanted = state(state);
    String keyPart = key == null || key.isEmpty() ? null : key;
    if (keyPart != null && keyPart.length() > MAX_KEY_PART) {
      throw ApiProblem.invalid("key", "key must be at most " + MAX_KEY_PART + " characters");
    }
    if (keyPart != null && !keyPart.chars().allMatch(c -> c >= 0x21 && c <= 0x7E)) {
      // no stored key holds anything else, and some databases refuse to compare such text with the key column
      throw ApiProblem.invalid("key", "key may hold only visible ASCII characters (0x21 to 0x7E), as"
          + " idempotency keys do");
    }
    if (limit < 1 || limit > MAX_LIMIT) {
      throw ApiProblem.invalid("limit", "limit must be 1 to " + MAX_LIMIT);
    }
    RecordKey from = after == null || after.isEmpty() ? null : RecordCursor.decode(after);
    List<RecordKey> keys = new ArrayList<>();
    List<IdempotencyRecord> shown = new ArrayList<>();
    if (keyPart == null && wanted.isPresent()) {
      List<IdempotencyRecord> listed = store.admin().list(wanted.get(), from, limit + 1);
      listed.forEach(r -> keys.add(r.key()));
      shown.addAll(listed.subList(0, Math.min(limit, listed.size())));
    } else {
      keys.addAll(search.find(keyPart, wanted.orElse(null), from, limit + 1));
      // a record deleted since the search is left out; the page ends where the search's did all the same
      keys.stream().limit(limit).forEach(k -> store.find(k).ifPresent(shown::add));
    }
    boolean more = keys.size() > limit;
    Instant now = clock.instant();
    List<Map<String, Object>> items = new ArrayList<>();
    shown.forEach(r -> items.add(toJson(r, now)));
    return Json.document("state", wanted.map(s -> s.name().toLowerCase(Locale.ROOT)).orElse("any"), "key", keyPart,
        "at", now.toString(), "records", items, "next", more ? RecordCursor.encode(keys.get(limit - 1)) : null);
  }

  /**
   * Deletes the record, in any state, so that the next request with its key starts afresh; answers the record's
   * state and version as they were. Refuses with
   *
   * <ul>
   *   <li>404 {@code NOT_FOUND.idempotency_record} when there is no record;
   *   <li>409 {@code CONFLICT.record.changed} when the stored version is not {@code version}, the one the operator
   *       saw: the record moved on (a worker renewed its lease, finished, or a completer took it over) and the
   *       decision to evict was made on a stale view;
   *   <li>409 {@code CONFLICT.record.lease_live} when the record is in progress and its lease has not ended: its
   *       worker is still running the request, and a retry after the eviction would run it a second time. With
   *       {@code force=true} it is evicted all the same (the operator knows the worker is gone).
   * </ul>
   *
   * <p>The read and the delete run in one store transaction, and the delete is conditional on the version read
   * ({@code IdempotencyStore.delete(tx, key, version)}): a worker that writes the record between the two (every
   * write bumps the version) makes the delete fail with {@code CONFLICT.record.changed}, never lose its write. What
   * remains is the clock: the lease is judged with this service's clock, so a worker on a host whose clock runs
   * behind may still be running when its lease looks ended here.
   */
  @DeleteMapping("/records")
  public Map<String, Object> evict(
      @RequestParam(name = "scope") String scope,
      @RequestParam(name = "operation") String operation,
      @RequestParam(name = "key") String key,
      @RequestParam(name = "version") String version,
      @RequestParam(name = "force", defaultValue = "false") String force) {
    RecordKey recordKey = new RecordKey(valid("scope", scope, Scope::of),
        valid("operation", operation, Operation::of), valid("key", key, IdempotencyKey::of));
    long expected = valid("version", version, v -> {
      try {
        return Long.parseLong(v);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("version must be the record's version, a whole number");
      }
    });
    boolean forced = valid("force", force, ConsoleController::bool);
    Instant now = clock.instant();
    IdempotencyRecord evicted;
    try {
      evicted = store.inTransaction(tx -> {
        IdempotencyRecord r = store.find(tx, recordKey).orElseThrow(() -> ApiProblem.notFound(
            "idempotency_record", "no record for key " + key + " of " + operation + " in scope " + scope));
        if (r.version() != expected) {
          throw changed(r, expected);
        }
        if (!forced && r.state() == RecordState.IN_PROGRESS && r.lockedUntil() != null
            && r.lockedUntil().isAfter(now)) {
          throw new ApiProblem(Problem.of(PaymentsProblems.RECORD_LEASE_LIVE)
              .withDetail("the record is in progress and its lease ends in "
                  + Duration.between(now, r.lockedUntil()).toMillis() + " ms (owner " + r.leaseOwner()
                  + "): its worker may still be running the request, and evicting it would let a retry run it"
                  + " again; wait for the lease to end, or evict with force=true")
              .with("lease_left_ms", Duration.between(now, r.lockedUntil()).toMillis()));
        }
        if (!store.delete(tx, recordKey, r.version())) {
          throw changed(r, expected);
        }
        return r;
      });
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("evicting " + recordKey + " failed: " + e.getMessage(), e);
    }
    return Json.document("evicted", true, "scope", scope, "operation", operation, "key", key,
        "state", evicted.state().name().toLowerCase(Locale.ROOT), "version", evicted.version(), "forced", forced);
  }

  /**
   * Decides an uncertain record from the console, at the version the operator saw (required here); the actor in the
   * audit is the console's admin and the operator named in the body, if any.
   */
  @PostMapping("/records/resolve")
  public Map<String, Object> resolve(HttpServletRequest request,
      @RequestParam(name = "scope", required = false) String scope,
      @RequestParam(name = "operation", required = false) String operation,
      @RequestParam(name = "key", required = false) String key,
      @RequestParam(name = "version") String version) throws IOException {
    RecordKey recordKey = RecordResolutions.key(scope, operation, key);
    Long expected = RecordResolutions.version(version);
    if (expected == null) {
      throw ApiProblem.invalid("version", "version is required: the record's version as the console showed it");
    }
    JsonNode body = json.object(JsonRequest.body(request));
    String who = request.getUserPrincipal() == null ? "admin" : request.getUserPrincipal().getName();
    return resolutions.resolve(recordKey, expected, body, who + " (console)");
  }

  /** The audit of a record, for the console. */
  @GetMapping("/records/history")
  public Map<String, Object> history(
      @RequestParam(name = "scope", required = false) String scope,
      @RequestParam(name = "operation", required = false) String operation,
      @RequestParam(name = "key", required = false) String key) {
    return resolutions.history(RecordResolutions.key(scope, operation, key));
  }

  private static ApiProblem changed(IdempotencyRecord r, long expected) {
    return new ApiProblem(Problem.of(PaymentsProblems.RECORD_CHANGED)
        .withDetail("the record changed since it was shown (version " + expected + "): reload it and decide again")
        .with("state", r.state().name().toLowerCase(Locale.ROOT)).with("version", r.version()));
  }

  private static boolean bool(String value) {
    switch (value) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new IllegalArgumentException("force must be true or false");
    }
  }

  @GetMapping("/metrics")
  public Map<String, Object> metrics() {
    return metrics.summary(clock.instant());
  }

  private static <T> T valid(String field, String value, Function<String, T> parse) {
    try {
      return parse.apply(value);
    } catch (IllegalArgumentException | IdemException e) {
      throw ApiProblem.invalid(field, e.getMessage());
    }
  }

  private static Optional<RecordState> state(String state) {
    switch (state.toLowerCase(Locale.ROOT)) {
      case "any":
        return Optional.empty();
      case "in_progress":
        return Optional.of(RecordState.IN_PROGRESS);
      case "completed":
        return Optional.of(RecordState.COMPLETED);
      case "failed":
        return Optional.of(RecordState.FAILED);
      case "uncertain":
        return Optional.of(RecordState.UNCERTAIN);
      default:
        throw ApiProblem.invalid("state", "state must be in_progress, completed, failed, uncertain or any");
    }
  }

  /**
   * The record, with three durations in milliseconds: {@code age_ms} since it was created and, for an in-progress
   * record, {@code lease_age_ms} since its lease was taken or last renewed (every write of an in-progress record
   * renews it) and {@code lease_left_ms} until it ends (negative once it has: the completer's to resume).
   */
  private static Map<String, Object> toJson(IdempotencyRecord r, Instant now) {
    boolean inProgress = r.state() == RecordState.IN_PROGRESS;
    Map<String, Object> json = RecordJson.of(r);
    json.put("age_ms", Duration.between(r.createdAt(), now).toMillis());
    json.put("lease_age_ms", inProgress ? Duration.between(r.updatedAt(), now).toMillis() : null);
    json.put("lease_left_ms", inProgress && r.lockedUntil() != null
        ? Duration.between(now, r.lockedUntil()).toMillis() : null);
    return json;
  }
}
