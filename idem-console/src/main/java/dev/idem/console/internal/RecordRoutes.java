package dev.idem.console.internal;

import static dev.idem.console.internal.ConsoleProblems.invalid;
import static dev.idem.console.internal.Params.time;

import dev.idem.console.RecordHints;
import dev.idem.console.RecordSearch;
import dev.idem.core.AuditEntry;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.StoredResponse;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The records' routes: list and search, evict, resolve, history. Every read goes through the Idem's store, which
 * opens what encryption at rest seals; a record whose sealed parts do not open (a key gone from the keyring, a
 * tampered column) is shown from the store underneath, still sealed and marked {@code unreadable}, so that an
 * operator can evict it. Thread-safe.
 */
public final class RecordRoutes {
  /** The most records on a page. */
  public static final int MAX_LIMIT = 200;
  /** The longest key part a search takes (an idempotency key is at most 255 characters). */
  public static final int MAX_KEY_PART = 255;
  private static final Set<String> RESOLUTION_FIELDS = Set.of("action", "reason", "status", "body");

  private final Idem idem;
  private final IdempotencyStore store;
  /** The store under encryption at rest (or the store itself): its states, versions and leases are never sealed. */
  private final IdempotencyStore plain;
  private final RecordSearch search;
  private final RecordHints hints;

  public RecordRoutes(Idem idem, RecordSearch search, RecordHints hints) {
    this.idem = idem;
    this.store = idem.store();
    this.plain = store instanceof EncryptedIdempotencyStore encrypted ? encrypted.unwrap() : store;
    this.search = search;
    this.hints = hints;
  }

  /** The store's name, for the session document. */
  public String storeName() {
    return store.name();
  }

  /**
   * A page of records ordered by (scope, operation, key). Without {@code key} and with one state, the store's admin
   * lists them; with a key part or {@code state=any}, the search finds them. {@code next} is the following page's
   * cursor, or null on the last.
   */
  public Map<String, Object> list(HttpServletRequest request, Instant now) {
    Optional<RecordState> wanted = state(Optional.ofNullable(Params.optional(request, "state")).orElse("in_progress"));
    String keyPart = Params.optional(request, "key");
    if (keyPart != null && keyPart.length() > MAX_KEY_PART) {
      throw invalid("key", "key must be at most " + MAX_KEY_PART + " characters");
    }
    if (keyPart != null && !keyPart.chars().allMatch(c -> c >= 0x21 && c <= 0x7E)) {
      // no stored key holds anything else, and some databases refuse to compare such text with the key column
      throw invalid("key", "key may hold only visible ASCII characters (0x21 to 0x7E), as idempotency keys do");
    }
    int limit = Params.integer(request, "limit", 50, 1, MAX_LIMIT);
    String after = Params.optional(request, "after");
    RecordKey from = after == null ? null : Params.after(after);
    List<RecordKey> keys = new ArrayList<>();
    List<IdempotencyRecord> shown = new ArrayList<>();
    if (keyPart == null && wanted.isPresent()) {
      List<IdempotencyRecord> listed = store.admin().list(wanted.get(), from, limit + 1);
      listed.forEach(r -> keys.add(r.key()));
      shown.addAll(listed.subList(0, Math.min(limit, listed.size())));
    } else {
      keys.addAll(search.find(keyPart, wanted.orElse(null), from, limit + 1));
      // a record deleted since the search is left out; the page ends where the search's did all the same
      keys.stream().limit(limit).forEach(k -> read(k).ifPresent(shown::add));
    }
    boolean more = keys.size() > limit;
    List<Map<String, Object>> items = new ArrayList<>();
    shown.forEach(r -> items.add(toJson(r, now)));
    return Json.document("state", wanted.map(s -> name(s)).orElse("any"), "key", keyPart, "at", now.toString(),
        "records", items, "next", more ? Params.cursor(keys.get(limit - 1)) : null);
  }

  /**
   * Deletes the record, in any state, at the version the operator saw, unless its worker still holds a live lease
   * (and {@code force} is not set); the read and the conditional delete run in one store transaction.
   */
  public Map<String, Object> evict(HttpServletRequest request, Instant now) {
    RecordKey key = Params.recordKey(request);
    long expected = Params.version(request);
    String force = Optional.ofNullable(Params.optional(request, "force")).orElse("false");
    if (!force.equals("true") && !force.equals("false")) {
      throw invalid("force", "force must be true or false");
    }
    boolean forced = force.equals("true");
    IdempotencyRecord evicted;
    try {
      evicted = store.inTransaction(tx -> {
        // read where nothing is sealed: an eviction needs no more than the state, the version and the lease, and
        // a record whose sealed parts do not open must stay evictable
        IdempotencyRecord r = plain.find(tx, key).orElseThrow(() -> notFound(key));
        if (r.version() != expected) {
          throw changed(r, expected);
        }
        if (!forced && r.state() == RecordState.IN_PROGRESS && r.lockedUntil() != null
            && r.lockedUntil().isAfter(now)) {
          long left = Duration.between(now, r.lockedUntil()).toMillis();
          throw new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.RECORD_LEASE_LIVE)
              .withDetail("the record is in progress and its lease ends in " + left + " ms (owner "
                  + r.leaseOwner() + "): its worker may still be running the request, and evicting it would let a"
                  + " retry run it again; wait for the lease to end, or evict with force=true")
              .with("lease_left_ms", left));
        }
        if (!store.delete(tx, key, r.version())) {
          throw changed(r, expected);
        }
        return r;
      });
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("evicting " + key + " failed: " + e.getMessage(), e);
    }
    return Json.document("evicted", true, "scope", key.scope().value(), "operation", key.operation().name(),
        "key", key.key().value(), "state", name(evicted.state()), "version", evicted.version(), "forced", forced);
  }

  /**
   * Applies the decision in {@code body} ({@code {"action":"complete"|"fail"|"retry","reason":"...","status":201,
   * "body":{...}}}) to the uncertain record at the version the operator saw, audited with {@code actor}.
   */
  public Map<String, Object> resolve(HttpServletRequest request, byte[] bodyBytes, String actor, Instant now) {
    RecordKey key = Params.recordKey(request);
    long expected = Params.version(request);
    Map<String, Object> body = object(bodyBytes);
    for (String name : body.keySet()) {
      if (!RESOLUTION_FIELDS.contains(name)) {
        throw invalid(name, "unknown field " + name + "; a resolution has " + RESOLUTION_FIELDS);
      }
    }
    Resolution resolution = resolution(body, actor, now);
    IdempotencyRecord current = read(key).orElseThrow(() -> notFound(key));
    if (current.state() != RecordState.UNCERTAIN) {
      throw new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.RECORD_NOT_UNCERTAIN)
          .withDetail("the record is " + name(current.state()) + ", not uncertain: only an uncertain record is"
              + " resolved by hand")
          .with("state", name(current.state())).with("version", current.version()));
    }
    if (unreadable(current)) {
      // resolving keeps the sealed checkpoint, so the record would stay unreadable and fail every retry
      throw new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.RECORD_UNREADABLE)
          .withDetail("the record's sealed data does not open (its key is no longer in the keyring, or the data was"
              + " altered): a resolution would leave it unreadable. Restore the key, or evict the record (the next"
              + " request with its key then runs afresh)")
          .with("state", name(current.state())).with("version", current.version()));
    }
    Optional<AuditEntry> entry = idem.resolve(key, expected, resolution);
    if (entry.isEmpty()) {
      throw changed(current, expected);
    }
    return toJson(entry.get());
  }

  /** The record's audit, oldest first. */
  public Map<String, Object> history(HttpServletRequest request) {
    RecordKey key = Params.recordKey(request);
    List<Map<String, Object>> entries = new ArrayList<>();
    idem.history(key).forEach(e -> entries.add(toJson(e)));
    return Json.document("scope", key.scope().value(), "operation", key.operation().name(), "key",
        key.key().value(), "history", entries);
  }

  /**
   * The record as the store opens it, or, when its sealed parts do not open, as the store underneath keeps it (still
   * sealed, which {@link #unreadable} tells).
   */
  private Optional<IdempotencyRecord> read(RecordKey key) {
    try {
      return store.find(key);
    } catch (DecryptionException e) {
      return plain.find(key);
    }
  }

  /** Whether the record is still sealed: read from underneath because it does not open. */
  private static boolean unreadable(IdempotencyRecord r) {
    return EncryptedIdempotencyStore.holdsSealedData(r);
  }

  /** A record key as the audit's target names it. */
  public static String target(RecordKey key) {
    return key.scope().value() + " / " + key.operation().name() + " / " + key.key().value();
  }

  private static Map<String, Object> object(byte[] bytes) {
    Object parsed;
    try {
      parsed = Json.read(new String(bytes, StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      throw invalid("body", "the body must be a JSON object: " + e.getMessage());
    }
    if (!(parsed instanceof Map)) {
      throw invalid("body", "the body must be a JSON object");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) parsed;
    return map;
  }

  private static Resolution resolution(Map<String, Object> body, String actor, Instant now) {
    String action = body.get("action") instanceof String s ? s : null;
    String reason = body.get("reason") instanceof String s && !s.isBlank() ? s : null;
    if (action == null) {
      throw invalid("action", "action must be complete, fail or retry");
    }
    if (reason == null) {
      throw invalid("reason", "reason is required: say why, for the audit");
    }
    if (reason.length() > Resolution.MAX_REASON) {
      throw invalid("reason", "reason must be at most " + Resolution.MAX_REASON + " characters");
    }
    try {
      switch (action) {
        case "complete":
          return Resolution.complete(answer(body), actor, reason, now);
        case "fail":
          return Resolution.fail(answer(body), actor, reason, now);
        case "retry":
          if (body.containsKey("status") || body.containsKey("body")) {
            throw invalid("status", "a retry takes no status or body: the record's phases answer");
          }
          return Resolution.retry(actor, reason, now);
        default:
          throw invalid("action", "action must be complete, fail or retry");
      }
    } catch (IllegalArgumentException e) {
      throw invalid("status", e.getMessage());
    }
  }

  private static StoredResponse answer(Map<String, Object> body) {
    Object status = body.get("status");
    if (!(status instanceof BigDecimal number)) {
      throw invalid("status", "status is required: the answer's HTTP status, 100 to 599");
    }
    int code;
    try {
      code = number.intValueExact();
    } catch (ArithmeticException e) {
      throw invalid("status", "status must be an HTTP status, 100 to 599");
    }
    if (code < 100 || code > 599) {
      throw invalid("status", "status must be an HTTP status, 100 to 599");
    }
    Object answer = body.get("body");
    byte[] bytes = answer == null ? new byte[0] : Json.write(answer);
    return StoredResponse.of(code, Map.of("content-type", List.of("application/json")), bytes);
  }

  private static ConsoleProblems.Refusal notFound(RecordKey key) {
    return ConsoleProblems.notFound("idempotency_record", "no record for key " + key.key() + " of "
        + key.operation() + " in scope " + key.scope());
  }

  private static ConsoleProblems.Refusal changed(IdempotencyRecord r, long expected) {
    return new ConsoleProblems.Refusal(Problem.of(ConsoleProblems.RECORD_CHANGED)
        .withDetail("the record changed since it was shown (version " + expected + "): reload it and decide again")
        .with("state", name(r.state())).with("version", r.version()));
  }

  private static String name(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
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
        throw invalid("state", "state must be in_progress, completed, failed, uncertain or any");
    }
  }

  /**
   * A record as the console shows it: key, state, recovery point, response status, lease and times, whether it is
   * {@code unreadable}, never the checkpoint's values or the request's or the response's body; with {@code age_ms}
   * and, in progress, {@code lease_age_ms} and {@code lease_left_ms} (negative once the lease ended).
   */
  private Map<String, Object> toJson(IdempotencyRecord r, Instant now) {
    boolean inProgress = r.state() == RecordState.IN_PROGRESS;
    Map<String, Object> json = Json.document(
        "scope", r.key().scope().value(),
        "operation", r.key().operation().name(),
        "key", r.key().key().value(),
        "state", name(r.state()),
        "recovery_point", r.recoveryPoint(),
        "response_status", r.response() == null ? null : r.response().status(),
        "lease_owner", r.leaseOwner(),
        "locked_until", time(r.lockedUntil()),
        "version", r.version(),
        "created_at", time(r.createdAt()),
        "updated_at", time(r.updatedAt()),
        "expires_at", time(r.expiresAt()),
        "resume_attempts", r.resumeAttempts(),
        "unreadable", unreadable(r),
        "age_ms", Duration.between(r.createdAt(), now).toMillis(),
        "lease_age_ms", inProgress ? Duration.between(r.updatedAt(), now).toMillis() : null,
        "lease_left_ms", inProgress && r.lockedUntil() != null ? Duration.between(now, r.lockedUntil()).toMillis()
            : null);
    json.put("hints", hints(r));
    return json;
  }

  /** The application's hints, bounded in number and length. */
  private Map<String, Object> hints(IdempotencyRecord r) {
    Map<String, Object> out = Json.document();
    if (unreadable(r)) {
      // the application's hints read what the record holds, and this one holds nothing readable
      return out;
    }
    Map<String, String> given = hints.hints(r);
    if (given == null) {
      return out;
    }
    for (Map.Entry<String, String> e : given.entrySet()) {
      if (out.size() == RecordHints.MAX_HINTS) {
        break;
      }
      if (e.getKey() != null && e.getValue() != null) {
        out.put(cut(e.getKey()), cut(e.getValue()));
      }
    }
    return out;
  }

  private static String cut(String text) {
    return text.length() > 200 ? text.substring(0, 200) + "…" : text;
  }

  private static Map<String, Object> toJson(AuditEntry e) {
    return Json.document("scope", e.key().scope().value(), "operation", e.key().operation().name(),
        "key", e.key().key().value(), "version", e.version(), "at", e.at().toString(), "actor", e.actor(),
        "action", name(e.action()), "from", name(e.from()), "to", name(e.to()), "reason", e.reason());
  }
}
