package dev.idem.jdbc.outbox;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;

/** A transport for tests: records every message it is given and answers with a scripted function. */
final class RecordingTransport implements OutboxTransport {
  final List<OutboxMessage> sent = Collections.synchronizedList(new ArrayList<>());
  private volatile Function<OutboxMessage, DeliveryResult> answer = m -> DeliveryResult.delivered();

  RecordingTransport answering(Function<OutboxMessage, DeliveryResult> answer) {
    this.answer = answer;
    return this;
  }

  @Override
  public DeliveryResult send(OutboxMessage message) {
    sent.add(message);
    return answer.apply(message);
  }

  List<String> types() {
    synchronized (sent) {
      List<String> out = new ArrayList<>();
      for (OutboxMessage m : sent) {
        out.add(m.type());
      }
      return out;
    }
  }
}
