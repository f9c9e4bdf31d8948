package dev.idem.spring.outbox;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

/** A transport for tests: records every message it is given and accepts it. */
final class RecordingTransport implements OutboxTransport {
  private final List<OutboxMessage> sent = Collections.synchronizedList(new ArrayList<>());
  volatile boolean closed;

  @Override
  public DeliveryResult send(OutboxMessage message) {
    sent.add(message);
    return DeliveryResult.delivered();
  }

  long count(UUID id) {
    synchronized (sent) {
      return sent.stream().filter(m -> m.id().equals(id)).count();
    }
  }

  @Override
  public void close() {
    closed = true;
  }
}
