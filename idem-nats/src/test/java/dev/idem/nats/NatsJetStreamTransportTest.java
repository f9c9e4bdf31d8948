package dev.idem.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import io.nats.client.Connection;
import io.nats.client.PublishOptions;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The outbox transport on the real NATS JetStream: Nats-Msg-Id, headers, duplicates, failures as retries. */
class NatsJetStreamTransportTest {
  private NatsFixture f;
  private final List<PublishAck> acks = new CopyOnWriteArrayList<>();
  private NatsJetStreamTransport transport;

  @BeforeEach
  void setUp() throws Exception {
    f = new NatsFixture();
    transport = NatsJetStreamTransport.builder(f.nats).name("transport-test").ackTimeout(Duration.ofSeconds(5))
        .listener((message, ack) -> acks.add(ack)).build();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  private OutboxMessage to(String destination) {
    return new OutboxMessage(UUID.randomUUID(), "order.placed", "order", "o-1", "{}", Map.of(), destination, 1,
        Instant.now());
  }

  @Test
  void aStoredMessageCarriesTheEventIdAsNatsMsgIdAndTheEventHeaders() throws Exception {
    OutboxMessage m = f.message();

    DeliveryResult result = transport.send(m);

    assertThat(result.isDelivered()).isTrue();
    MessageInfo stored = f.jsm.getMessage(f.stream, acks.get(0).getSeqno());
    assertThat(new String(stored.getData(), StandardCharsets.UTF_8)).isEqualTo(m.payload());
    assertThat(stored.getHeaders().getFirst("Nats-Msg-Id")).isEqualTo(m.id().toString());
    assertThat(stored.getHeaders().getFirst(NatsJetStreamTransport.EVENT_TYPE)).isEqualTo("order.placed");
    assertThat(stored.getHeaders().getFirst(NatsJetStreamTransport.AGGREGATE_TYPE)).isEqualTo("order");
    assertThat(stored.getHeaders().getFirst(NatsJetStreamTransport.AGGREGATE_ID)).isEqualTo(m.aggregateId());
    assertThat(stored.getHeaders().getFirst("tenant")).isEqualTo("t-1");
  }

  @Test
  void nonAsciiHeaderValuesArePercentEncodedAndDelivered() throws Exception {
    OutboxMessage m = new OutboxMessage(UUID.randomUUID(), "commande.passée", "client", "müller-42", "{}",
        Map.of("note", "100% sûr"), "nats:" + f.subject, 1, Instant.now());

    DeliveryResult result = transport.send(m);

    assertThat(result.isDelivered()).as(String.valueOf(result)).isTrue();
    MessageInfo stored = f.jsm.getMessage(f.stream, acks.get(0).getSeqno());
    String aggregateId = stored.getHeaders().getFirst(NatsJetStreamTransport.AGGREGATE_ID);
    assertThat(aggregateId).isEqualTo("m%C3%BCller-42");
    assertThat(NatsJetStreamTransport.decodeHeader(aggregateId)).isEqualTo("müller-42");
    assertThat(NatsJetStreamTransport.decodeHeader(stored.getHeaders().getFirst(NatsJetStreamTransport.EVENT_TYPE)))
        .isEqualTo("commande.passée");
    assertThat(NatsJetStreamTransport.decodeHeader(stored.getHeaders().getFirst("note"))).isEqualTo("100% sûr");
    assertThat(NatsJetStreamTransport.encodeHeader("o-1")).isEqualTo("o-1");
  }

  @Test
  void aPayloadLargerThanTheServerAllowsIsPermanent() {
    long max = f.nats.getServerInfo().getMaxPayload();
    String big = "{\"x\":\"" + "a".repeat((int) max + 10) + "\"}";
    OutboxMessage m = new OutboxMessage(UUID.randomUUID(), "order.placed", "order", "o-1", big, Map.of(),
        "nats:" + f.subject, 1, Instant.now());

    DeliveryResult result = transport.send(m);

    assertThat(result.kind()).as(String.valueOf(result)).isEqualTo(DeliveryResult.Kind.PERMANENT);
    assertThat(f.storedMessages()).isZero();
  }

  @Test
  void userInformationIsStrippedFromUrls() {
    assertThat(NatsJetStreamTransport.withoutUserInfo("nats://alice:s3cret@10.0.0.1:4222"))
        .isEqualTo("nats://10.0.0.1:4222");
    assertThat(NatsJetStreamTransport.withoutUserInfo("nats://127.0.0.1:4222")).isEqualTo("nats://127.0.0.1:4222");
  }

  @Test
  void aResendWithinTheDuplicateWindowIsDeliveredButStoredOnce() throws Exception {
    OutboxMessage m = f.message();

    DeliveryResult first = transport.send(m);
    DeliveryResult again = transport.send(m);
    PublishAck direct = f.js.publish(f.subject, m.payload().getBytes(StandardCharsets.UTF_8),
        PublishOptions.builder().messageId(m.id().toString()).build());

    assertThat(first.isDelivered()).isTrue();
    assertThat(again.isDelivered()).isTrue();
    assertThat(acks).extracting(PublishAck::isDuplicate).containsExactly(false, true);
    assertThat(direct.isDuplicate()).isTrue();
    assertThat(f.storedMessages()).isEqualTo(1);
  }

  @Test
  void aBatchIsPublishedAsynchronouslyWithOneResultPerMessageInOrder() {
    List<OutboxMessage> batch = List.of(f.message(), to("nats:no.stream.captures." + f.suffix), f.message(),
        to("nats:idem.test." + f.suffix + ".*"), f.message());

    List<DeliveryResult> results = transport.sendAll(batch);

    assertThat(results).extracting(DeliveryResult::kind).containsExactly(DeliveryResult.Kind.DELIVERED,
        DeliveryResult.Kind.RETRY, DeliveryResult.Kind.DELIVERED, DeliveryResult.Kind.PERMANENT,
        DeliveryResult.Kind.DELIVERED);
    assertThat(f.storedMessages()).isEqualTo(3);
  }

  @Test
  void aSubjectNoStreamCapturesIsARetry() {
    DeliveryResult result = transport.send(to("nats:no.stream.captures." + f.suffix));

    assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(result.error()).get().asString().contains("no.stream.captures." + f.suffix);
  }

  @Test
  void aDestinationWithoutAConcreteSubjectIsDeadAtOnce() {
    List<DeliveryResult> results = transport.sendAll(List.of(to("nats"), to("nats:a..b"), to("nats:a.>")));

    assertThat(results).extracting(DeliveryResult::kind).containsOnly(DeliveryResult.Kind.PERMANENT);
    assertThat(results.get(0).error()).get().asString().contains("no subject");
    assertThat(results.get(1).error()).get().asString().contains("empty token");
    assertThat(results.get(2).error()).get().asString().contains("wildcard");
  }

  @Test
  void anExpectedStreamRefusesMessagesCapturedByAnotherStream() {
    NatsJetStreamTransport strict = NatsJetStreamTransport.builder(f.nats).expectedStream("SOME_OTHER_STREAM").build();

    DeliveryResult result = strict.send(f.message());

    assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(f.storedMessages()).isZero();
  }

  @Test
  void aClosedConnectionIsARetry() throws Exception {
    Connection own = NatsServer.connect();
    NatsJetStreamTransport onClosed = NatsJetStreamTransport.builder(own).build();
    own.close();

    DeliveryResult result = onClosed.send(f.message());

    assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(f.storedMessages()).isZero();
  }

  @Test
  void theBuilderRefusesBadConfiguration() {
    assertThatThrownBy(() -> NatsJetStreamTransport.builder(f.nats).ackTimeout(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ackTimeout must be > 0");
    assertThatThrownBy(() -> NatsJetStreamTransport.builder(f.nats).name(" "))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name must be 1 to 64 characters");
  }
}
