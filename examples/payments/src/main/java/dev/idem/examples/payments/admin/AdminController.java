package dev.idem.examples.payments.admin;

import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.examples.payments.provider.FaultInjection;
import dev.idem.examples.payments.provider.PaymentProvider;
import dev.idem.examples.payments.provider.ProviderFaults;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * Operator routes (open to loopback callers and to the admin key, see
 * {@link dev.idem.examples.payments.auth.AdminAccess}): the provider's faults and statistics, a paginated view of
 * the idempotency records, and the resolution of uncertain ones:
 *
 * <ul>
 *   <li>{@code POST /admin/idempotency-records/resolve?scope=&operation=&key=[&version=]} with
 *       {@code {"action":"complete"|"fail"|"retry","reason":"...","status":201,"body":{...},"operator":"alice"}}
 *       ({@link RecordResolutions}); the actor in the audit is the admin caller (and the {@code operator} named);
 *   <li>{@code GET /admin/idempotency-records/history?scope=&operation=&key=}: the record's audit.
 * </ul>
 */
@RestController
@RequestMapping(path = "/admin", produces = MediaType.APPLICATION_JSON_VALUE)
public class AdminController {
  private static final int MAX_LIMIT = 500;
  private static final Set<String> FAULT_FIELDS =
      Set.of("provider_timeout_after_commit_rate", "provider_error_rate", "provider_latency_ms",
          "provider_refusal_rate");

  private final PaymentProvider provider;
  private final IdempotencyStore store;
  private final Json json;
  private final RecordResolutions resolutions;

  public AdminController(PaymentProvider provider, Idem idem, Json json, RecordResolutions resolutions) {
    this.provider = provider;
    // the Idem's store: it opens what encryption at rest seals (checkpoints, answers)
    this.store = idem.store();
    this.json = json;
    this.resolutions = resolutions;
  }

  /** Decides an uncertain record; answers the audit entry. */
  @PostMapping("/idempotency-records/resolve")
  public Map<String, Object> resolve(HttpServletRequest request,
      @RequestParam(name = "scope", required = false) String scope,
      @RequestParam(name = "operation", required = false) String operation,
      @RequestParam(name = "key", required = false) String key,
      @RequestParam(name = "version", required = false) String version) throws IOException {
    RecordKey recordKey = RecordResolutions.key(scope, operation, key);
    JsonNode body = json.object(JsonRequest.body(request));
    return resolutions.resolve(recordKey, RecordResolutions.version(version), body, actor(request));
  }

  /** The audit of a record: every resolution, oldest first. */
  @GetMapping("/idempotency-records/history")
  public Map<String, Object> history(
      @RequestParam(name = "scope", required = false) String scope,
      @RequestParam(name = "operation", required = false) String operation,
      @RequestParam(name = "key", required = false) String key) {
    return resolutions.history(RecordResolutions.key(scope, operation, key));
  }

  /** The admin caller, as the audit names it: the principal and the address it called from. */
  static String actor(HttpServletRequest request) {
    String who = request.getUserPrincipal() == null ? "admin" : request.getUserPrincipal().getName();
    return who + "@" + request.getRemoteAddr();
  }


  @GetMapping("/faults")
  public Map<String, Object> faults() {
    return provider.faults().current().toJson();
  }

  /** Changes the faults; fields left out keep their current value. Answers the faults now in force. */
  @PutMapping("/faults")
  public Map<String, Object> setFaults(HttpServletRequest request) throws IOException {
    JsonNode body = json.object(JsonRequest.body(request));
    for (String name : body.propertyNames()) {
      if (!FAULT_FIELDS.contains(name)) {
        throw ApiProblem.invalid(name, "unknown field " + name + "; the faults are " + FAULT_FIELDS);
      }
    }
    FaultInjection faults = provider.faults();
    ProviderFaults current = faults.current();
    ProviderFaults next;
    try {
      next = new ProviderFaults(
          rate(body, "provider_timeout_after_commit_rate", current.timeoutAfterCommitRate()),
          rate(body, "provider_error_rate", current.errorRate()),
          latency(body, current.latencyMs()),
          rate(body, "provider_refusal_rate", current.refusalRate()));
    } catch (IllegalArgumentException e) {
      String field = e.getMessage().split(" ", 2)[0];
      throw ApiProblem.invalid(field, e.getMessage());
    }
    faults.set(next);
    return next.toJson();
  }

  @GetMapping("/provider/stats")
  public Map<String, Object> providerStats() {
    return provider.stats().toJson();
  }

  /**
   * A page of records in one state, ordered by (scope, operation, key). {@code next} is the cursor of the following
   * page, or {@code null} on the last.
   */
  @GetMapping("/idempotency-records")
  public Map<String, Object> records(
      @RequestParam(name = "state", defaultValue = "in_progress") String state,
      @RequestParam(name = "limit", defaultValue = "50") int limit,
      @RequestParam(name = "after", required = false) String after) {
    RecordState recordState = state(state);
    if (limit < 1 || limit > MAX_LIMIT) {
      throw ApiProblem.invalid("limit", "limit must be 1 to " + MAX_LIMIT);
    }
    List<IdempotencyRecord> page = store.admin().list(recordState, after == null || after.isEmpty() ? null
        : RecordCursor.decode(after), limit + 1);
    boolean more = page.size() > limit;
    List<IdempotencyRecord> shown = more ? page.subList(0, limit) : page;
    List<Map<String, Object>> items = new ArrayList<>();
    shown.forEach(r -> items.add(RecordJson.of(r)));
    return Json.document("state", state.toLowerCase(Locale.ROOT), "records", items,
        "next", more ? RecordCursor.encode(shown.get(shown.size() - 1).key()) : null);
  }

  private static RecordState state(String state) {
    switch (state.toLowerCase(Locale.ROOT)) {
      case "in_progress":
        return RecordState.IN_PROGRESS;
      case "completed":
        return RecordState.COMPLETED;
      case "failed":
        return RecordState.FAILED;
      case "uncertain":
        return RecordState.UNCERTAIN;
      default:
        throw ApiProblem.invalid("state", "state must be in_progress, completed, failed or uncertain");
    }
  }

  private static double rate(JsonNode body, String field, double current) {
    JsonNode v = body.get(field);
    if (v == null) {
      return current;
    }
    if (!v.isNumber()) {
      throw ApiProblem.invalid(field, field + " must be a number from 0 to 1");
    }
    return v.doubleValue();
  }

  private static long latency(JsonNode body, long current) {
    JsonNode v = body.get("provider_latency_ms");
    if (v == null) {
      return current;
    }
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      throw ApiProblem.invalid("provider_latency_ms", "provider_latency_ms must be an integer from 0 to "
          + ProviderFaults.MAX_LATENCY_MS);
    }
    return v.longValue();
  }
}
