package dev.idem.examples.payments.provider;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.InvalidKeyException;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonFields;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * The simulated provider's HTTP API, as an external client would call it: {@code POST /provider/charges} and
 * {@code POST /provider/refunds} with an {@code Idempotency-Key} header (a repeated key answers 200 with the original
 * and {@code Idempotent-Replayed: true}), and reads, among them the look-up of a charge or a refund by the
 * idempotency key its call carried ({@code GET /provider/charges?idempotency_key=},
 * {@code GET /provider/refunds?idempotency_key=}). Open without credentials: it stands for another company's API.
 */
@RestController
@RequestMapping(path = "/provider", produces = MediaType.APPLICATION_JSON_VALUE)
public class ProviderController {
  private static final Logger LOG = LoggerFactory.getLogger(ProviderController.class);
  private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");

  private final PaymentProvider provider;
  private final Json json;

  public ProviderController(PaymentProvider provider, Json json) {
    this.provider = provider;
    this.json = json;
  }

  @PostMapping("/charges")
  public void charge(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String key = key(request);
    JsonNode body = json.object(JsonRequest.body(request));
    String accountId = JsonFields.text(body, "account_id").filter(s -> !s.isBlank() && s.length() <= 255)
        .orElseThrow(() -> ApiProblem.invalid("account_id", "account_id must be a string of 1 to 255 characters"));
    long amount = positive(body, "amount");
    String currency = JsonFields.text(body, "currency").filter(c -> CURRENCY.matcher(c).matches())
        .orElseThrow(() -> ApiProblem.invalid("currency", "currency must be 3 upper-case letters"));
    try {
      PaymentProvider.Charged charged = provider.charged(key, new ChargeRequest(accountId, amount, currency));
      write(response, charged.replayed(), charged.charge().toJson());
    } catch (ProviderException e) {
      throw failure(e);
    }
  }

  @PostMapping("/refunds")
  public void refund(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String key = key(request);
    JsonNode body = json.object(JsonRequest.body(request));
    String chargeId = JsonFields.text(body, "charge_id").filter(s -> !s.isBlank() && s.length() <= 64)
        .orElseThrow(() -> ApiProblem.invalid("charge_id", "charge_id must be a charge id"));
    long amount = positive(body, "amount");
    try {
      PaymentProvider.Refunded refunded = provider.refunded(key, new RefundRequest(chargeId, amount));
      write(response, refunded.replayed(), refunded.refund().toJson());
    } catch (ProviderException e) {
      throw failure(e);
    }
  }

  @GetMapping("/charges/{id}")
  public Map<String, Object> charge(@PathVariable("id") String id) {
    return provider.findCharge(id).map(ProviderCharge::toJson)
        .orElseThrow(() -> ApiProblem.notFound("charge", "no charge " + id));
  }

  @GetMapping("/charges")
  public Map<String, Object> charges(@RequestParam("account_id") String accountId) {
    List<Map<String, Object>> charges = provider.chargesOf(accountId, 1000).stream()
        .map(ProviderCharge::toJson).toList();
    return Json.list("charges", charges);
  }

  /** The charge made with this idempotency key: 404 when the provider never applied one. */
  @GetMapping(path = "/charges", params = "idempotency_key")
  public Map<String, Object> chargeByKey(@RequestParam("idempotency_key") String key) {
    try {
      return provider.chargeByKey(key).map(ProviderCharge::toJson)
          .orElseThrow(() -> ApiProblem.notFound("charge", "no charge was made with this idempotency key"));
    } catch (ProviderException e) {
      throw failure(e);
    } catch (IllegalArgumentException e) {
      throw ApiProblem.invalid("idempotency_key", e.getMessage());
    }
  }

  /** The refund made with this idempotency key: 404 when the provider never applied one. */
  @GetMapping(path = "/refunds", params = "idempotency_key")
  public Map<String, Object> refundByKey(@RequestParam("idempotency_key") String key) {
    try {
      return provider.refundByKey(key).map(ProviderRefund::toJson)
          .orElseThrow(() -> ApiProblem.notFound("refund", "no refund was made with this idempotency key"));
    } catch (ProviderException e) {
      throw failure(e);
    } catch (IllegalArgumentException e) {
      throw ApiProblem.invalid("idempotency_key", e.getMessage());
    }
  }

  @GetMapping("/refunds/{id}")
  public Map<String, Object> refund(@PathVariable("id") String id) {
    return provider.findRefund(id).map(ProviderRefund::toJson)
        .orElseThrow(() -> ApiProblem.notFound("refund", "no refund " + id));
  }

  private void write(HttpServletResponse response, boolean replayed, Map<String, Object> document)
      throws IOException {
    byte[] body = json.write(document);
    response.setStatus(replayed ? 200 : 201);
    if (replayed) {
      response.setHeader(IdemHeaders.IDEMPOTENT_REPLAYED, "true");
    }
    response.setContentType(MediaType.APPLICATION_JSON_VALUE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  private static String key(HttpServletRequest request) {
    List<String> values = Collections.list(request.getHeaders(IdemHeaders.IDEMPOTENCY_KEY));
    if (values.isEmpty()) {
      throw new ApiProblem(Problem.of(ProblemCode.IDEMPOTENCY_KEY_MISSING)
          .withDetail("provider calls need an Idempotency-Key header"));
    }
    try {
      return IdempotencyKey.fromHeaderValues(values).value();
    } catch (InvalidKeyException e) {
      throw new ApiProblem(Problem.of(ProblemCode.IDEMPOTENCY_KEY_INVALID)
          .withDetail(e.getMessage()));
    }
  }

  private static long positive(JsonNode body, String field) {
    JsonFields.requireIntegerType(body, field);
    long value = JsonFields.integer(body, field).orElse(0);
    if (value <= 0) {
      throw ApiProblem.invalid(field, field + " must be a positive integer");
    }
    return value;
  }

  private static ApiProblem failure(ProviderException e) {
    if (e instanceof ProviderTimeoutException) {
      return new ApiProblem(Problem.of(ProblemCode.DEPENDENCY_TIMEOUT).withStatus(504).withTitle("Provider timeout")
          .withDetail(e.getMessage()));
    }
    if (e instanceof ProviderUnavailableException) {
      // the message may carry the provider's database error: it goes to the log, never into an answer
      LOG.warn("provider call failed: {}", e.getMessage(), e);
      return new ApiProblem(Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE).withTitle("Provider unavailable")
          .withDetail("the provider is unavailable; retry with the same Idempotency-Key"));
    }
    return new ApiProblem(Problem.of(((ProviderRejectedException) e).problemCode())
        .withDetail(e.getMessage()));
  }
}
