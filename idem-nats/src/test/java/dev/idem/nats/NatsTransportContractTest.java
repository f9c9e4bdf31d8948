package dev.idem.nats;

import dev.idem.outbox.OutboxTransport;
import dev.idem.test.outbox.OutboxTransportContract;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamState;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link OutboxTransportContract} on the real NATS JetStream: each destination is a subject captured by a stream of
 * its own (in memory, two-minute duplicate window), read back by sequence number with the headers decoded
 * ({@link NatsJetStreamTransport#decodeHeader}); its outage deletes the stream, so that no stream answers the
 * publish, and its end adds the stream again. JetStream drops a re-sent {@code Nats-Msg-Id} within the window
 * ({@link #dropsDuplicates()}); the transport's javadoc does not promise a batch's order, so the kit checks order
 * only for messages sent one after another.
 */
class NatsTransportContractTest extends OutboxTransportContract {
  /** The header JetStream deduplicates on, which the transport sets to the event id. */
  private static final String MSG_ID = "Nats-Msg-Id";
  private static Connection nats;
  private static JetStreamManagement jsm;
  private final Map<String, List<Received>> arrived = new ConcurrentHashMap<>();
  private final Map<String, Long> readUpTo = new ConcurrentHashMap<>();

  @BeforeAll
  static void connect() throws Exception {
    nats = NatsServer.connect();
    jsm = nats.jetStreamManagement();
  }

  @AfterAll
  static void disconnect() throws Exception {
    nats.close();
  }

  @Override
  protected boolean dropsDuplicates() {
    return true;
  }

  @Override
  protected String createDestination() throws Exception {
    String suffix = uniqueName("");
    String destination = "nats:idem.kit." + suffix + ".events";
    addStream(destination);
    return destination;
  }

  @Override
  protected OutboxTransport createTransport() throws Exception {
    return NatsJetStreamTransport.builder(nats).name("transport-kit").ackTimeout(Duration.ofSeconds(5)).build();
  }

  @Override
  protected List<Received> received(String destination) throws Exception {
    List<Received> seen = arrived.computeIfAbsent(destination, d -> new ArrayList<>());
    StreamState state = jsm.getStreamInfo(stream(destination)).getStreamState();
    long from = Math.max(readUpTo.getOrDefault(destination, 0L) + 1, state.getFirstSequence());
    for (long seq = from; seq <= state.getLastSequence(); seq++) {
      MessageInfo m = jsm.getMessage(stream(destination), seq);
      Map<String, String> headers = new LinkedHashMap<>();
      Headers h = m.getHeaders();
      if (h != null) {
        for (String name : h.keySet()) {
          headers.put(name, NatsJetStreamTransport.decodeHeader(h.getFirst(name)));
        }
      }
      String id = h == null ? null : h.getFirst(MSG_ID);
      seen.add(new Received(id, m.getData(), headers, null));
      readUpTo.put(destination, seq);
    }
    return seen;
  }

  @Override
  protected void startOutage(String destination) throws Exception {
    jsm.deleteStream(stream(destination));
  }

  @Override
  protected void endOutage(String destination) throws Exception {
    readUpTo.remove(destination); // the new stream numbers its messages from 1 again
    addStream(destination);
  }

  @Override
  protected void deleteDestination(String destination) throws Exception {
    try {
      jsm.deleteStream(stream(destination));
    } catch (JetStreamApiException e) {
      // deleted by its outage already
    }
  }

  private static void addStream(String destination) throws Exception {
    String subject = destination.substring("nats:".length());
    jsm.addStream(StreamConfiguration.builder().name(stream(destination)).subjects(subject)
        .storageType(StorageType.Memory).duplicateWindow(Duration.ofMinutes(2)).build());
  }

  private static String stream(String destination) {
    return "IDEM_KIT_" + destination.split("\\.")[2];
  }
}
