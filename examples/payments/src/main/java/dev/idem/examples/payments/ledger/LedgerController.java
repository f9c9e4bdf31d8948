package dev.idem.examples.payments.ledger;

import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import java.security.Principal;
import java.sql.SQLException;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /ledger/summary} and {@code GET /ledger?account_id=&limit=}: the caller's ledger. */
@RestController
public class LedgerController {
  private static final int MAX_LIMIT = 1000;

  private final Ledger ledger;

  public LedgerController(Ledger ledger) {
    this.ledger = ledger;
  }

  @GetMapping(path = "/ledger/summary", produces = MediaType.APPLICATION_JSON_VALUE)
  public Map<String, Object> summary(Principal principal) throws SQLException {
    return ledger.summary(Tenant.of(principal).name()).toJson();
  }

  @GetMapping(path = "/ledger", produces = MediaType.APPLICATION_JSON_VALUE)
  public Map<String, Object> entries(Principal principal,
      @RequestParam(name = "account_id", required = false) String accountId,
      @RequestParam(name = "limit", defaultValue = "100") int limit) throws SQLException {
    if (limit < 1 || limit > MAX_LIMIT) {
      throw ApiProblem.invalid("limit", "limit must be 1 to " + MAX_LIMIT);
    }
    String account = accountId == null || accountId.isEmpty() ? null : accountId;
    return Json.list("entries", ledger.entries(Tenant.of(principal).name(), account, limit).stream()
        .map(LedgerEntry::toJson).toList());
  }
}
