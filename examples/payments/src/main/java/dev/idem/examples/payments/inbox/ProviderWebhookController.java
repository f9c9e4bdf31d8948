package dev.idem.examples.payments.inbox;

import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.webhook.WebhookReceiver;
import dev.idem.outbox.webhook.WebhookVerificationException;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.sql.Connection;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /webhooks/provider}: the provider's Standard Webhooks, authenticated by their signature (no API key),
 * processed exactly once through the inbox, keyed by {@code webhook-id}.
 *
 * <ul>
 *   <li>200 {@code {"id", "duplicate", "result"}}: applied now, or a duplicate whose first result is returned;
 *   <li>401 {@code AUTH.webhook_signature}: a missing, stale or forged signature; nothing is stored;
 *   <li>409 {@code CONFLICT.webhook.payload_mismatch}: a known id with another body; nothing is applied;
 *   <li>400 {@code VALIDATION.webhook_payload}: a signed body this service cannot read (rolled back, not stored);
 *   <li>413 for a body over the verifier's limit; 5xx when the effect failed, so that the provider retries.
 * </ul>
 */
@RestController
public class ProviderWebhookController {
  /** The inbox consumer name of the provider's webhooks. */
  public static final String CONSUMER = "provider-webhooks";

  private final WebhookReceiver receiver;
  private final ProviderConfirmations confirmations;
  private final Json json;

  public ProviderWebhookController(WebhookReceiver providerWebhookReceiver, ProviderConfirmations confirmations,
      Json json) {
    this.receiver = providerWebhookReceiver;
    this.confirmations = confirmations;
    this.json = json;
  }

  @PostMapping("/webhooks/provider")
  public void receive(HttpServletRequest request, HttpServletResponse response) throws IOException {
    byte[] body = body(request, receiver.verifier().maxBodyBytes());
    String id = request.getHeader("webhook-id");
    InboxResult result;
    try {
      result = receiver.receive(id, request.getHeader("webhook-timestamp"), request.getHeader("webhook-signature"),
          body, null, (tx, event) -> confirmations.apply(tx.unwrap(Connection.class), id, body));
    } catch (WebhookVerificationException e) {
      if (e.reason() == WebhookVerificationException.Reason.BODY_TOO_LARGE) {
        throw tooLarge(receiver.verifier().maxBodyBytes());
      }
      throw new ApiProblem(Problem.of(401, "AUTH.webhook_signature", "Webhook signature refused")
          .withDetail(e.getMessage()));
    } catch (InboxPayloadMismatchException e) {
      throw new ApiProblem(Problem.of(409, "CONFLICT.webhook.payload_mismatch", "Webhook id reused")
          .withDetail("webhook " + id + " was received before with another body; nothing was applied"));
    } catch (InboxHandlerException e) {
      if (e.getCause() instanceof ApiProblem) {
        throw (ApiProblem) e.getCause();
      }
      throw e;
    }
    byte[] out = json.write(Json.document("id", id, "duplicate", result.duplicate(), "result", result.result()));
    response.setStatus(200);
    response.setContentType(MediaType.APPLICATION_JSON_VALUE);
    response.setContentLength(out.length);
    response.getOutputStream().write(out);
  }

  private static byte[] body(HttpServletRequest request, int max) throws IOException {
    if (request.getContentLengthLong() > max) {
      throw tooLarge(max);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    try (InputStream in = request.getInputStream()) {
      int n;
      while ((n = in.read(buffer)) != -1) {
        if (out.size() + n > max) {
          throw tooLarge(max);
        }
        out.write(buffer, 0, n);
      }
    }
    return out.toByteArray();
  }

  private static ApiProblem tooLarge(int max) {
    return new ApiProblem(Problem.of(413, "VALIDATION.request_too_large", "Request body too large")
        .withDetail("a provider webhook is at most " + max + " bytes"));
  }
}
