package dev.idem.outbox.webhook;

import dev.idem.outbox.DeliveryResult;

/**
 * {@link WebhookTransportContractTest} with an endpoint answering 410 Gone as the outage: the transport documents that
 * as final (the event is dead and the endpoint disabled, so later events to it die without a request), so
 * {@link #outageKind()} is {@link DeliveryResult.Kind#PERMANENT}. The outage ends when the server answers 204 again
 * and the endpoint's owner enables it again.
 */
class WebhookGoneTransportContractTest extends WebhookTransportContractTest {
  @Override
  protected DeliveryResult.Kind outageKind() {
    return DeliveryResult.Kind.PERMANENT;
  }

  @Override
  protected void startOutage(String destination) {
    receiver(destination).status = 410;
  }

  @Override
  protected void endOutage(String destination) {
    receiver(destination).status = 204;
    endpoints.computeIfPresent(destination.substring("webhook:".length()),
        (id, e) -> new WebhookEndpoint(e.id(), e.url(), e.secrets(), true));
  }
}
