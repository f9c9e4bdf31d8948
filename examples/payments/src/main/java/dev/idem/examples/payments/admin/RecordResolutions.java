package dev.idem.examples.payments.admin;

import dev.idem.core.AuditEntry;
import dev.idem.core.Idem;
import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonFields;
import dev.idem.examples.payments.web.PaymentsProblems;
import dev.idem.servlet.Problem;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * Operators' decisions about uncertain records, for the admin API (idem-console has its own): complete the record
 * with a given answer, fail it with a given answer, or send it back to work, audited with the operator as actor and a
 * required reason ({@link Idem#resolve(RecordKey, long, Resolution)}); and the audit of a record. Thread-safe.
 *
 * <p>The request body: {@code {"action":"complete"|"fail"|"retry", "reason":"...", "status":201, "body":{...}}}, the
 * status and body (any JSON value, answered as {@code application/json}) for {@code complete} (a status below 400)
 * and {@code fail} (a 4xx) only.
 */
@Component
public class RecordResolutions {
  private static final Set<String> FIELDS = Set.of("action", "reason", "status", "body", "operator");

  private final Idem idem;
  private final Json json;
  private final Clock clock;

  public RecordResolutions(Idem idem, Json json, Clock clock) {
    this.idem = idem;
    this.json = json;
    this.clock = clock;
  }

  /** A record's version from a query parameter: {@code null} when absent, 400 when not a whole number. */
  public static Long version(String version) {
    if (version == null || version.isEmpty()) {
      return null;
    }
    try {
      return Long.parseLong(version);
    } catch (NumberFormatException e) {
      throw ApiProblem.invalid("version", "version must be the record's version, a whole number");
    }
  }

  /** The record key of the query parameters, each validated as the engine would. */
  public static RecordKey key(String scope, String operation, String key) {
    return new RecordKey(valid("scope", scope, Scope::of), valid("operation", operation, Operation::of),
        valid("key", key, IdempotencyKey::of));
  }

  /**
   * Applies the decision in {@code body} to the uncertain record of {@code key}, at {@code version} when given (the
   * version the operator saw), else at its current version. Answers the audit entry.
   *
   * @param actor who decides: the admin caller; the body's optional {@code operator} names the person
   * @throws ApiProblem 404 without a record, 409 {@code CONFLICT.record.not_uncertain} when it is not uncertain,
   *     409 {@code CONFLICT.record.changed} when it moved on, 400 for an invalid decision
   */
  public Map<String, Object> resolve(RecordKey key, Long version, JsonNode body, String actor) {
    for (String name : body.propertyNames()) {
      if (!FIELDS.contains(name)) {
        throw ApiProblem.invalid(name, "unknown field " + name + "; a resolution has " + FIELDS);
      }
    }
    String operator = JsonFields.text(body, "operator").map(String::strip).filter(s -> !s.isEmpty()).orElse(null);
    Resolution resolution = resolution(body, operator == null ? actor : operator + " via " + actor);
    IdempotencyRecord current = idem.store().find(key).orElseThrow(() -> ApiProblem.notFound("idempotency_record",
        "no record for key " + key.key() + " of " + key.operation() + " in scope " + key.scope()));
    if (current.state() != RecordState.UNCERTAIN) {
      throw new ApiProblem(Problem.of(PaymentsProblems.RECORD_NOT_UNCERTAIN)
          .withDetail("the record is " + current.state().name().toLowerCase(Locale.ROOT) + ", not uncertain: only an"
              + " uncertain record is resolved by hand")
          .with("state", current.state().name().toLowerCase(Locale.ROOT)).with("version", current.version()));
    }
    long expected = version == null ? current.version() : version;
    Optional<AuditEntry> entry = idem.resolve(key, expected, resolution);
    if (entry.isEmpty()) {
      throw new ApiProblem(Problem.of(PaymentsProblems.RECORD_CHANGED)
          .withDetail("the record changed since it was shown (version " + expected + "): reload it and decide again")
          .with("version", current.version()));
    }
    return toJson(entry.get());
  }

  /** The record's audit, oldest first. */
  public Map<String, Object> history(RecordKey key) {
    List<Map<String, Object>> entries = new ArrayList<>();
    idem.history(key).forEach(e -> entries.add(toJson(e)));
    return Json.document("scope", key.scope().value(), "operation", key.operation().name(), "key",
        key.key().value(), "history", entries);
  }

  private Resolution resolution(JsonNode body, String actor) {
    String action = JsonFields.text(body, "action").orElseThrow(() -> ApiProblem.invalid("action",
        "action must be complete, fail or retry"));
    String reason = JsonFields.text(body, "reason").filter(r -> !r.isBlank()).orElseThrow(() -> ApiProblem.invalid(
        "reason", "reason is required: say why, for the audit"));
    try {
      switch (action) {
        case "complete":
          return Resolution.complete(answer(body), actor, reason, clock.instant());
        case "fail":
          return Resolution.fail(answer(body), actor, reason, clock.instant());
        case "retry":
          if (body.has("status") || body.has("body")) {
            throw ApiProblem.invalid("status", "a retry takes no status or body: the record's phases answer");
          }
          return Resolution.retry(actor, reason, clock.instant());
        default:
          throw ApiProblem.invalid("action", "action must be complete, fail or retry");
      }
    } catch (IllegalArgumentException e) {
      throw ApiProblem.invalid("status", e.getMessage());
    }
  }

  private StoredResponse answer(JsonNode body) {
    JsonFields.requireIntegerType(body, "status");
    long status = JsonFields.integer(body, "status").orElseThrow(() -> ApiProblem.invalid("status",
        "status is required: the answer's HTTP status"));
    if (status < 100 || status > 599) {
      throw ApiProblem.invalid("status", "status must be an HTTP status, 100 to 599");
    }
    JsonNode answer = body.get("body");
    byte[] bytes = answer == null || answer.isNull() ? new byte[0] : json.write(answer);
    return StoredResponse.of((int) status, Map.of("content-type", List.of("application/json")), bytes);
  }

  private static Map<String, Object> toJson(AuditEntry e) {
    return Json.document("scope", e.key().scope().value(), "operation", e.key().operation().name(),
        "key", e.key().key().value(), "version", e.version(), "at", e.at().toString(), "actor", e.actor(),
        "action", e.action().name().toLowerCase(Locale.ROOT), "from", e.from().name().toLowerCase(Locale.ROOT),
        "to", e.to().name().toLowerCase(Locale.ROOT), "reason", e.reason());
  }

  private static <T> T valid(String field, String value, Function<String, T> parse) {
    if (value == null) {
      throw ApiProblem.invalid(field, field + " is required");
    }
    try {
      return parse.apply(value);
    } catch (IllegalArgumentException | IdemException e) {
      throw ApiProblem.invalid(field, e.getMessage());
    }
  }
}
