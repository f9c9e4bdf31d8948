package dev.idem.spring.boot;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Scope;
import dev.idem.core.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code idempotency} actuator endpoint: list records by state (paginated), inspect one, evict one.
 *
 * <ul>
 *   <li>{@code GET /actuator/idempotency?state=in_progress&limit=50&after=<cursor>}
 *   <li>{@code GET /actuator/idempotency/{scope}/{key}?operation=POST%20/payments}
 *   <li>{@code DELETE /actuator/idempotency/{scope}/{key}?operation=POST%20/payments}
 * </ul>
 *
 * Listing and eviction go through the store's {@link IdempotencyStore#admin()}, the lookup through the store itself.
 * Responses and request bodies are never shown, only their status and size: they may hold personal data. Expose the
 * endpoint only to operators. Thread-safe.
 */
@Endpoint(id = "idempotency")
public class IdempotencyEndpoint {
  static final int MAX_LIMIT = 500;
  private final IdempotencyStore store;

  public IdempotencyEndpoint(IdempotencyStore store) {
    this.store = store;
  }

  @ReadOperation
  public Map<String, Object> records(@Nullable String state, @Nullable Integer limit, @Nullable String after) {
    RecordState wanted = parseState(state == null ? "in_progress" : state);
    int n = limit == null ? 50 : limit;
    if (n < 1 || n > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be 1.." + MAX_LIMIT + ", got " + n);
    }
    RecordKey from = after == null || after.isBlank() ? null : decode(after);
    List<IdempotencyRecord> page = store.admin().list(wanted, from, n);
    List<Map<String, Object>> items = new ArrayList<>();
    page.forEach(r -> items.add(describe(r)));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("state", wanted.name().toLowerCase(Locale.ROOT));
    out.put("records", items);
    out.put("next", page.size() == n ? encode(page.get(page.size() - 1).key()) : null);
    return out;
  }

  @ReadOperation
  public @Nullable Map<String, Object> record(@Selector String scope, @Selector String key, String operation) {
    return store.find(recordKey(scope, operation, key)).map(IdempotencyEndpoint::describe).orElse(null);
  }

  @DeleteOperation
  public Map<String, Object> evict(@Selector String scope, @Selector String key, String operation) {
    boolean evicted = store.admin().evict(recordKey(scope, operation, key));
    return Map.of("evicted", evicted);
  }

  private static RecordKey recordKey(String scope, String operation, String key) {
    return new RecordKey(Scope.of(scope), Operation.of(operation), IdempotencyKey.of(key));
  }

  static RecordState parseState(String state) {
    try {
      return RecordState.valueOf(state.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("state must be in_progress, completed or failed, got '" + state + "'");
    }
  }

  static Map<String, Object> describe(IdempotencyRecord r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("scope", r.key().scope().value());
    m.put("operation", r.key().operation().name());
    m.put("key", r.key().key().value());
    m.put("state", r.state().name().toLowerCase(Locale.ROOT));
    m.put("recovery_point", r.recoveryPoint());
    m.put("response_status", r.response() == null ? null : r.response().status());
    m.put("response_bytes", r.response() == null ? null : r.response().bodyLength());
    m.put("lease_owner", r.leaseOwner());
    m.put("locked_until", text(r.lockedUntil()));
    m.put("version", r.version());
    m.put("created_at", text(r.createdAt()));
    m.put("updated_at", text(r.updatedAt()));
    m.put("expires_at", text(r.expiresAt()));
    m.put("retain_until", text(r.retainUntil()));
    return m;
  }

  private static String text(Instant i) {
    return i == null ? null : i.toString();
  }

  /** An opaque page cursor: the last key of the page. */
  static String encode(RecordKey key) {
    String raw = key.scope().value() + '\u0000' + key.operation().name() + '\u0000' + key.key().value();
    return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
  }

  static RecordKey decode(String cursor) {
    try {
      String raw = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
      String[] parts = raw.split("\u0000", -1);
      if (parts.length != 3) {
        throw new IllegalArgumentException("bad cursor");
      }
      return recordKey(parts[0], parts[1], parts[2]);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("after is not a cursor returned by this endpoint");
    }
  }
}
