package dev.idem.examples.payments.account;

import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.servlet.conditional.Preconditions;
import dev.idem.servlet.conditional.VersionCondition;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Pattern;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code PUT /accounts/{id}} and {@code GET /accounts/{id}}: a tenant's account profiles, with optimistic
 * concurrency instead of idempotency keys.
 *
 * <ul>
 *   <li>{@code If-None-Match: *}: create only when absent; 201, or 412 when the account exists (a retry of a create
 *       that succeeded gets 412, never a second account);
 *   <li>{@code If-Match: "v3"}: replace only that version; 200, or 412 when the account changed since (no lost
 *       update) or does not exist;
 *   <li>neither: 428 {@code VALIDATION.precondition_required}.
 * </ul>
 *
 * Accounts of one tenant are invisible to the others: every statement is keyed by the tenant.
 */
@RestController
public class AccountController {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");

  private final Accounts accounts;
  private final Json json;
  private final Clock clock;

  public AccountController(Accounts accounts, Json json, Clock clock) {
    this.accounts = accounts;
    this.json = json;
    this.clock = clock;
  }

  @GetMapping(path = "/accounts/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
  public void get(HttpServletRequest request, HttpServletResponse response, @PathVariable("id") String id)
      throws SQLException, IOException {
    Account account = accounts.find(Tenant.of(request.getUserPrincipal()).name(), id)
        .orElseThrow(() -> ApiProblem.notFound("account", "no account " + id));
    if (Preconditions.require(request, response, account.etag(), Preconditions.Requirement.NONE)) {
      write(response, 200, account);
    }
  }

  @PutMapping("/accounts/{id}")
  public void put(HttpServletRequest request, HttpServletResponse response, @PathVariable("id") String id)
      throws SQLException, IOException {
    String tenant = Tenant.of(request.getUserPrincipal()).name();
    if (!ID.matcher(id).matches()) {
      throw ApiProblem.invalid("id", "an account id is 1 to 64 letters, digits or _ . : -");
    }
    Preconditions preconditions = Preconditions.of(request);
    Preconditions.Result early = preconditions.check(Preconditions.Requirement.ANY);
    if (!early.proceed()) {
      early.write(response, null);
      return;
    }
    AccountProfile profile = AccountProfile.parse(json.object(JsonRequest.body(request)));
    VersionCondition expected = preconditions.versionCondition();
    Instant now = Instant.ofEpochMilli(clock.millis());
    if (expected.createOnly()) {
      Optional<Account> created = accounts.create(tenant, id, profile, now);
      if (created.isEmpty()) {
        Preconditions.Result.failed("If-None-Match: * but account " + id + " exists already; GET it, then replace"
            + " it with If-Match and its ETag").write(response, null);
        return;
      }
      response.setHeader("Location", "/accounts/" + id);
      write(response, 201, created.get());
      return;
    }
    if (preconditions.ifMatch().isEmpty()) {
      Preconditions.Result.required("PUT on an account takes If-Match with the ETag of the profile it replaces,"
          + " or If-None-Match: * to create it only when absent; If-None-Match with entity-tags is not enough")
          .write(response, null);
      return;
    }
    Optional<Account> replaced = expected.updatable()
        ? accounts.replace(tenant, id, profile, expected, now)
        : Optional.empty();
    if (replaced.isEmpty()) {
      Preconditions.Result.failed("the preconditions (If-Match: " + preconditions.ifMatch().orElseThrow()
          + preconditions.ifNoneMatch().map(l -> ", If-None-Match: " + l).orElse("") + ") do not hold for account "
          + id + ": it changed since, or does not exist; GET it again, or create it with If-None-Match: *")
          .write(response, null);
      return;
    }
    write(response, 200, replaced.get());
  }

  private void write(HttpServletResponse response, int status, Account account) throws IOException {
    byte[] body = json.write(account.toJson());
    response.setStatus(status);
    response.setHeader(Preconditions.ETAG, account.etag().toString());
    response.setContentType("application/json");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}
