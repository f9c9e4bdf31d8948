package dev.idem.webhook;

import dev.idem.core.StoreException;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.webhook.WebhookReceiver;
import dev.idem.outbox.webhook.WebhookVerificationException;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Receives Standard Webhooks at one path, exactly once: verifies the raw body's {@code webhook-signature} and
 * {@code webhook-timestamp} with the {@link WebhookReceiver}'s verifier, then runs the {@link InboxHandler} and
 * records the {@code webhook-id} in the inbox in one transaction. A redelivered webhook (same id, same body, new
 * timestamp and signature) is answered 200 again and the handler does not run. The handler finds the verified
 * webhook in {@code event.message(WebhookMessage.class)}.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).build()).build();
 * InboxHandler handler = (tx, event) -> {
 *   WebhookMessage message = event.message(WebhookMessage.class);
 *   settle(tx.unwrap(Connection.class), message.bodyText());
 *   return "settled";
 * };
 * WebhookVerifier verifier =
 *     WebhookVerifier.builder(WebhookSecret.parse(current), WebhookSecret.parse(previous)).build();
 * WebhookReceiverServlet servlet = WebhookReceiverServlet.of(WebhookReceiver.of("provider", verifier, inbox), handler);
 * context.addServlet(new ServletHolder(servlet), "/webhooks/provider");
 * }</pre>
 *
 * <table>
 *   <caption>Answers</caption>
 *   <tr><th>situation</th><th>status</th><th>stored</th></tr>
 *   <tr><td>processed now</td><td>200 {@code {"id":..,"duplicate":false}}</td><td>effect and inbox record</td></tr>
 *   <tr><td>processed before, same body</td><td>200 {@code {"id":..,"duplicate":true}}</td><td>nothing more</td></tr>
 *   <tr><td>a method other than POST</td><td>405 problem, {@code Allow: POST}</td><td>nothing</td></tr>
 *   <tr><td>body over {@code verifier.maxBodyBytes()}</td><td>413 problem</td><td>nothing</td></tr>
 *   <tr><td>headers missing or malformed, stale or future timestamp, no matching signature</td>
 *       <td>401 problem</td><td>nothing</td></tr>
 *   <tr><td>an id processed before with another body</td><td>409 problem</td><td>nothing</td></tr>
 *   <tr><td>the handler threw</td><td>500 problem, retryable</td><td>nothing: the sender's retry processes it</td></tr>
 *   <tr><td>the database failed</td><td>503 problem, retryable</td><td>nothing</td></tr>
 * </table>
 *
 * <p>Problems are RFC 9457 documents ({@link Problem}); none repeats a secret, a signature or the body. Thread-safe.
 */
public final class WebhookReceiverServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  private static final System.Logger LOG = System.getLogger(WebhookReceiverServlet.class.getName());

  /** The event id header, the inbox's key. */
  public static final String ID_HEADER = "webhook-id";
  /** The Unix-seconds timestamp header. */
  public static final String TIMESTAMP_HEADER = "webhook-timestamp";
  /** The space-separated {@code v1,<base64>} signatures header. */
  public static final String SIGNATURE_HEADER = "webhook-signature";

  private final transient WebhookReceiver receiver;
  private final transient InboxHandler handler;

  private WebhookReceiverServlet(WebhookReceiver receiver, InboxHandler handler) {
    this.receiver = Objects.requireNonNull(receiver, "receiver");
    this.handler = Objects.requireNonNull(handler, "handler");
  }

  /** A servlet that verifies with {@code receiver} and applies each new webhook with {@code handler}. */
  public static WebhookReceiverServlet of(WebhookReceiver receiver, InboxHandler handler) {
    return new WebhookReceiverServlet(receiver, handler);
  }

  /** The inbox consumer name webhooks are recorded under. */
  public String consumer() {
    return receiver.consumer();
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
    int limit = receiver.verifier().maxBodyBytes();
    if (!"POST".equals(request.getMethod())) {
      HttpBodies.discardOrClose(request, response, limit);
      response.setHeader("Allow", "POST");
      Problem.of(ProblemCode.METHOD_NOT_ALLOWED)
          .withDetail("a webhook receiver accepts POST only").write(response);
      return;
    }
    String id = request.getHeader(ID_HEADER);
    String timestamp = request.getHeader(TIMESTAMP_HEADER);
    String signature = request.getHeader(SIGNATURE_HEADER);
    try {
      // what needs no body first: a request that cannot pass costs no body read
      receiver.verifier().checkHeaders(id, timestamp, signature);
    } catch (WebhookVerificationException e) {
      HttpBodies.discardOrClose(request, response, HttpBodies.MAX_DISCARDED_BYTES);
      refused(e, limit).write(response);
      return;
    }
    byte[] body = HttpBodies.readAtMost(request, limit);
    if (body == null) {
      // read the rest (bounded) so that the sender gets the answer; a larger body closes the connection
      HttpBodies.discardOrClose(request, response, HttpBodies.MAX_DISCARDED_BYTES);
      tooLarge(limit).write(response);
      return;
    }
    Map<String, String> headers = headers(request);
    InboxResult result;
    try {
      result = receiver.receive(id, timestamp, signature, body, message(id, timestamp, body, headers), handler);
    } catch (WebhookVerificationException e) {
      refused(e, limit).write(response);
      return;
    } catch (InboxPayloadMismatchException e) {
      warn("webhook '" + id + "' came again with a different body; refused with 409", null);
      Problem.of(ProblemCode.WEBHOOK_PAYLOAD_MISMATCH)
          .withDetail("webhook '" + id + "' was processed before with a different body").write(response);
      return;
    } catch (InboxHandlerException e) {
      warn("the handler failed on webhook '" + id + "'; nothing was recorded and the sender's retry will process it",
          e.getCause());
      notProcessed(Problem.of(ProblemCode.WEBHOOK_HANDLER_FAILED)).write(response);
      return;
    } catch (StoreException e) {
      warn("the inbox failed on webhook '" + id + "'", e);
      notProcessed(Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE).withTitle("Inbox unavailable")).write(response);
      return;
    }
    byte[] answer = ("{\"id\":" + HttpBodies.jsonString(id) + ",\"duplicate\":" + result.duplicate() + "}")
        .getBytes(StandardCharsets.UTF_8);
    response.setStatus(200);
    response.setContentType("application/json");
    response.setContentLength(answer.length);
    response.getOutputStream().write(answer);
  }

  private void warn(String message, Throwable cause) {
    LOG.log(System.Logger.Level.WARNING, "webhook receiver '" + receiver.consumer() + "': " + message, cause);
  }

  private static Problem notProcessed(Problem problem) {
    return problem.withDetail("the webhook was not processed; send it again").withRetryable(true);
  }

  private static Problem tooLarge(int limit) {
    return Problem.of(ProblemCode.REQUEST_TOO_LARGE)
        .withDetail("the webhook body is larger than the limit of " + limit + " bytes");
  }

  private Problem refused(WebhookVerificationException e, int limit) {
    LOG.log(System.Logger.Level.DEBUG, () -> "webhook receiver '" + receiver.consumer() + "': refused a webhook ("
        + e.reason() + ")");
    return switch (e.reason()) {
      case BODY_TOO_LARGE -> tooLarge(limit);
      case MALFORMED_HEADERS -> Problem.of(ProblemCode.WEBHOOK_HEADERS_INVALID).withDetail(e.getMessage());
      case TIMESTAMP_OUT_OF_TOLERANCE ->
          Problem.of(ProblemCode.WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE).withDetail(e.getMessage());
      default -> Problem.of(ProblemCode.WEBHOOK_SIGNATURE_INVALID).withDetail("no webhook-signature matches the body");
    };
  }

  private static Map<String, String> headers(HttpServletRequest request) {
    Map<String, String> headers = new LinkedHashMap<>();
    Enumeration<String> names = request.getHeaderNames();
    while (names != null && names.hasMoreElements()) {
      String name = names.nextElement();
      String value = request.getHeader(name);
      if (value != null) {
        headers.putIfAbsent(name, value);
      }
    }
    return headers;
  }

  /** The handler's view of the webhook; null when the headers are missing or malformed (verification refuses it). */
  private static WebhookMessage message(String id, String timestamp, byte[] body, Map<String, String> headers) {
    if (id == null || timestamp == null) {
      return null;
    }
    try {
      return new WebhookMessage(id, Instant.ofEpochSecond(Long.parseLong(timestamp)), body, headers);
    } catch (RuntimeException malformed) {
      return null;
    }
  }

  @Override
  public String toString() {
    return "WebhookReceiverServlet{" + receiver.consumer() + ", " + receiver.verifier() + '}';
  }
}
