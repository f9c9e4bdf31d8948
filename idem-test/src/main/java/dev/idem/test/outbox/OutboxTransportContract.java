package dev.idem.test.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxTransport;
import dev.idem.test.Eventually;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link OutboxTransport} must pass, checked on the real destination: what the transport reports
 * is compared with what arrived there. Extend it in a test of your transport and implement:
 * <ul>
 *   <li>{@link #createDestination()}: a destination of the test's own, with nothing in it (a queue, a stream, a
 *       topic, an endpoint under a fresh name);</li>
 *   <li>{@link #createTransport()}: a new transport that reaches every destination {@code createDestination} makes;
 *   </li>
 *   <li>{@link #received(String)}: everything that has arrived at a destination so far, in the order it arrived, each
 *       as a {@link Received}: the message id the receiver deduplicates on, the payload's bytes, the headers and the
 *       broker's ordering key where it has one;</li>
 *   <li>{@link #startOutage(String)} and {@link #endOutage(String)}: make one destination refuse messages or be
 *       unreachable (delete its queue, stream or topic, stop its server, point it at a closed port), then take them
 *       again;</li>
 *   <li>optionally {@link #deleteDestination(String)}, called after each test for every destination it made.</li>
 * </ul>
 *
 * <p>What a transport may not promise is a capability to override, never a skipped test:
 * {@link #ordersPerAggregate()} (a batch keeps each aggregate's order; off by default),
 * {@link #keysByAggregate()} (the broker's ordering key is the aggregate id; off), {@link #dropsDuplicates()} (the
 * broker drops a re-send of a message id; off), {@link #isolatesFailures()} (one destination's outage fails only its
 * own messages of a batch; on) and {@link #outageKind()} (what a message gets during an outage; retry).
 * {@link #headers()} are the event headers every message carries; {@link #arrivalTimeout()} and
 * {@link #recoveryTimeout()} bound the waits.
 *
 * <p>The tests and what they prove (in each, every message that arrives must carry the id of a message the kit sent
 * to that destination):
 * <ul>
 *   <li>a delivered message arrives once, with the event id as its message id, its payload byte for byte (UTF-8,
 *       characters outside the BMP included) and the event's headers (names compared ignoring case), and, where the
 *       broker has one, the aggregate id as its key;</li>
 *   <li>{@code sendAll} of a batch returns one delivered result per message and every message arrives; an empty batch
 *       gets an empty list;</li>
 *   <li>a batch alternating between a live destination and one in an outage gets each message's own result at its
 *       own position: the live ones delivered (with {@link #isolatesFailures()}), the others {@link #outageKind()};
 *       every message reported delivered arrived;</li>
 *   <li>messages of one aggregate sent one after another arrive in that order; with {@link #ordersPerAggregate()}, so
 *       do those of one batch, three aggregates interleaved;</li>
 *   <li>the same message sent twice (a relay's redelivery, attempt 2) is delivered twice and every copy that arrives
 *       carries the same message id and payload: two copies, or one with {@link #dropsDuplicates()};</li>
 *   <li>during an outage, a {@code send} and every message of a {@code sendAll} get {@link #outageKind()}, never
 *       delivered (an exception, which the relay takes as a retry, counts as a retry);</li>
 *   <li>after the outage ends, a re-send of the same message (as the relay would, attempt by attempt) is delivered
 *       within {@link #recoveryTimeout()} and arrives, and the next message is delivered at its first attempt;</li>
 *   <li>4 threads sending at once (two by {@code sendAll}, two message by message) each get their own results, all
 *       delivered, and every message arrives with its own payload.</li>
 * </ul>
 * The kit closes each test's transport once; {@link OutboxTransport} does not promise that a second {@code close()}
 * is harmless, nor what a closed transport does, so neither is tested. Nothing sleeps to decide a race: the kit waits
 * for arrivals by polling {@link #received(String)} up to {@link #arrivalTimeout()}, and after an outage re-sends
 * with 100 ms between attempts up to {@link #recoveryTimeout()}.
 */
public abstract class OutboxTransportContract {
  /** How long a test waits for other threads at most; a bound, never what is tested. */
  protected static final Duration WAIT = Duration.ofSeconds(60);
  /** The type of the kit's events. */
  protected static final String TYPE = "kit.event";
  /** The aggregate type of the kit's events. */
  protected static final String AGGREGATE_TYPE = "kit-aggregate";

  /** The transport of the current test, from {@link #createTransport()}. */
  protected OutboxTransport transport;
  private final List<String> destinations = new ArrayList<>();
  /** The ids of the messages {@link #message} made, by destination. */
  private final Map<String, Set<String>> sentIds = new ConcurrentHashMap<>();

  /**
   * A destination of this test's own with nothing in it, as a relay hands it over ({@code <route>:<detail>}, e.g.
   * {@code rabbitmq:/kit-queue-1f3a}). Use a fresh name every time ({@link #uniqueName(String)}): tests of one run and
   * of runs before may share the broker. Called once or twice per test, after {@link #createTransport()}.
   */
  protected abstract String createDestination() throws Exception;

  /** A new transport for one test, reaching every destination {@link #createDestination()} makes. */
  protected abstract OutboxTransport createTransport() throws Exception;

  /**
   * Everything that has arrived at {@code destination} since it was made, in the order it arrived (copies included).
   * It may lag behind the broker: the kit polls it. What arrived before an outage may be left out after it (a deleted
   * queue takes its messages along).
   */
  protected abstract List<Received> received(String destination) throws Exception;

  /**
   * Starts an outage of {@code destination} and returns once it has started: from now on the broker refuses its
   * messages, or it is unreachable. Other destinations keep working, unless {@link #isolatesFailures()} is off (an
   * outage of the transport's whole connection, say).
   */
  protected abstract void startOutage(String destination) throws Exception;

  /**
   * Ends the outage of {@code destination}: it takes messages again, under the same destination, though the
   * transport may need some time ({@link #recoveryTimeout()}) to notice.
   */
  protected abstract void endOutage(String destination) throws Exception;

  /** Removes {@code destination}, in an outage or not; called after each test, the transport closed. */
  protected void deleteDestination(String destination) throws Exception {}

  // -------------------------------------------------------------------------------------------------- capabilities

  /**
   * Whether the messages of one aggregate in one {@code sendAll} arrive in the batch's order (default false: the
   * relay itself hands ordered events over one at a time). Return true when the transport promises it, e.g. a Kafka
   * record key and an idempotent producer.
   */
  protected boolean ordersPerAggregate() {
    return false;
  }

  /**
   * Whether the broker has an ordering key and the transport sets it to the aggregate id, so that
   * {@link Received#key()} must equal it (default false: the key is not checked).
   */
  protected boolean keysByAggregate() {
    return false;
  }

  /**
   * Whether the destination drops a re-send of a message id it already holds, so that one copy arrives where two
   * were sent (default false: each delivered send arrives), e.g. JetStream within its duplicate window.
   */
  protected boolean dropsDuplicates() {
    return false;
  }

  /**
   * Whether a batch's messages to a live destination are delivered while another destination of the batch is in an
   * outage (default true). When false, they may fail too, and {@code sendAll} may throw for such a batch (the relay
   * then counts a failed attempt for every message of the route).
   */
  protected boolean isolatesFailures() {
    return true;
  }

  /**
   * What a message gets during an outage (default {@link DeliveryResult.Kind#RETRY}); return
   * {@link DeliveryResult.Kind#PERMANENT} when the transport documents that outage as final, such as an endpoint
   * answering 410 Gone. An exception from the transport counts as a retry, as it does for the relay.
   */
  protected DeliveryResult.Kind outageKind() {
    return DeliveryResult.Kind.RETRY;
  }

  /** The event headers every message of the kit carries; names and values the transport must pass on unchanged. */
  protected Map<String, String> headers() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("tenant", "kit-tenant");
    headers.put("correlation-id", "kit-42");
    return headers;
  }

  /** How long a delivered message may take to show in {@link #received(String)} (default 30 s). */
  protected Duration arrivalTimeout() {
    return Duration.ofSeconds(30);
  }

  /** How long after {@link #endOutage(String)} a re-sent message may keep failing (default 60 s). */
  protected Duration recoveryTimeout() {
    return Duration.ofSeconds(60);
  }

  // ------------------------------------------------------------------------------------------------------- set-up

  @BeforeEach
  void setUpOutboxTransport() throws Exception {
    transport = createTransport();
  }

  @AfterEach
  void tearDownOutboxTransport() throws Exception {
    Exception first = null;
    try {
      if (transport != null) {
        transport.close();
      }
    } catch (Exception e) {
      first = e;
    }
    for (String d : destinations) {
      try {
        deleteDestination(d);
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    destinations.clear();
    sentIds.clear();
    if (first != null) {
      throw first;
    }
  }

  // ------------------------------------------------------------------------------------------------------ helpers

  /**
   * One message as it arrived at a destination.
   *
   * @param messageId the message id the receiver deduplicates on (a message-id property, a header)
   * @param payload the body's bytes
   * @param headers the message's headers, their values as text (names compared ignoring case)
   * @param key the broker's ordering key (a Kafka record key), null where it has none
   */
  public record Received(String messageId, byte[] payload, Map<String, String> headers, String key) {
    public Received {
      payload = payload == null ? null : payload.clone();
      headers = headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /** The payload's bytes. */
    @Override
    public byte[] payload() {
      return payload == null ? null : payload.clone();
    }

    /** The payload as UTF-8 text. */
    public String payloadText() {
      return payload == null ? null : new String(payload, StandardCharsets.UTF_8);
    }

    /** The value of the header named {@code name}, ignoring case; null when there is none. */
    public String header(String name) {
      for (Map.Entry<String, String> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue();
        }
      }
      return null;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Received r && Objects.equals(messageId, r.messageId) && Arrays.equals(payload, r.payload)
          && headers.equals(r.headers) && Objects.equals(key, r.key);
    }

    @Override
    public int hashCode() {
      return Objects.hash(messageId, Arrays.hashCode(payload), headers, key);
    }

    @Override
    public String toString() {
      return "Received{id=" + messageId + ", key=" + key + ", headers=" + headers + ", payload=" + payloadText() + '}';
    }
  }

  /** {@code prefix} and 10 random hex digits: a name no other test or run uses. */
  protected static String uniqueName(String prefix) {
    return prefix + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL | 0x10000000000L)
        .substring(1);
  }

  /** A fresh aggregate id, with a non-ASCII character so that keys are carried as UTF-8. */
  protected static String aggregate() {
    return uniqueName("agg-\u00e4-");
  }

  /** A new event for {@code destination}: a fresh id, {@link #headers()}, a payload with non-ASCII text. */
  protected OutboxMessage message(String destination, String aggregateId) {
    UUID id = UUID.randomUUID();
    sentIds.computeIfAbsent(destination, k -> ConcurrentHashMap.newKeySet()).add(id.toString());
    String payload = "{\"id\":\"" + id + "\",\"aggregate\":\"" + aggregateId
        + "\",\"text\":\"Gr\u00fc\u00dfe \u20ac \ud83d\ude00\"}";
    return new OutboxMessage(id, TYPE, AGGREGATE_TYPE, aggregateId, payload, headers(), destination, 1,
        Instant.now().truncatedTo(ChronoUnit.MILLIS));
  }

  /** {@code m} again, as a relay sends it on its next attempt: the same id, payload and headers. */
  protected static OutboxMessage nextAttempt(OutboxMessage m) {
    return new OutboxMessage(m.id(), m.type(), m.aggregateType(), m.aggregateId(), m.payload(), m.headers(),
        m.destination(), m.attempt() + 1, m.createdAt());
  }

  /** A destination from {@link #createDestination()}, deleted after the test. */
  protected String destination() throws Exception {
    String d = Objects.requireNonNull(createDestination(), "createDestination() returned null");
    destinations.add(d);
    return d;
  }

  /**
   * Sends {@code m} as a relay does: an exception counts as a retry.
   *
   * @return the result, never null
   */
  protected DeliveryResult sendAsRelay(OutboxMessage m) {
    DeliveryResult r;
    try {
      r = transport.send(m);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    } catch (Exception e) {
      return DeliveryResult.retry(OutboxTransport.describe(e), null);
    }
    assertThat(r).as("the result of send(%s)", m.id()).isNotNull();
    return r;
  }

  /**
   * Sends {@code messages} as a relay does ({@link OutboxRelay#runOnce()}): a {@link RuntimeException} is a retry for
   * every message.
   */
  protected List<DeliveryResult> sendAllAsRelay(List<OutboxMessage> messages) {
    List<DeliveryResult> results;
    try {
      results = transport.sendAll(messages);
    } catch (RuntimeException e) {
      return Collections.nCopies(messages.size(), DeliveryResult.retry(OutboxTransport.describe(e), null));
    }
    assertResultsFor(messages, results);
    return results;
  }

  private static void assertResultsFor(List<OutboxMessage> messages, List<DeliveryResult> results) {
    assertThat(results).as("sendAll's results of %s messages", messages.size()).isNotNull().hasSize(messages.size())
        .doesNotContainNull();
  }

  private static void assertDelivered(List<OutboxMessage> messages, List<DeliveryResult> results) {
    for (int i = 0; i < messages.size(); i++) {
      assertThat(results.get(i).kind()).as("result %s (event %s): %s", i, messages.get(i).id(), results.get(i))
          .isEqualTo(DeliveryResult.Kind.DELIVERED);
    }
  }

  /**
   * Polls {@link #received(String)} until a message with each of {@code ids} has arrived; returns all it holds, each
   * of which carries the id of a message {@link #message} made for {@code destination}. Fails at once when one
   * arrives with another id.
   */
  protected List<Received> awaitArrivals(String destination, Collection<UUID> ids) {
    Set<String> wanted = new HashSet<>();
    for (UUID id : ids) {
      wanted.add(id.toString());
    }
    List<Received> got = Eventually.await("every one of " + wanted.size() + " messages at " + destination,
        arrivalTimeout(), () -> read(destination),
        all -> arrivedIds(all).containsAll(wanted) || stranger(destination, all) != null);
    assertThat(stranger(destination, got)).as("a message at %s whose id is that of no message sent there (the"
        + " message id must be the event id); everything there: %s", destination, got).isNull();
    return got;
  }

  /** Polls {@link #received(String)} until {@code copies} messages with {@code id} have arrived; returns them. */
  protected List<Received> awaitCopies(String destination, UUID id, int copies) {
    List<Received> all = Eventually.await(copies + " copies of " + id + " at " + destination, arrivalTimeout(),
        () -> read(destination), got -> copiesOf(got, id).size() >= copies || stranger(destination, got) != null);
    assertThat(stranger(destination, all)).as("a message at %s whose id is that of no message sent there (the"
        + " message id must be the event id); everything there: %s", destination, all).isNull();
    return copiesOf(all, id);
  }

  /** The first of {@code received} whose id is not that of a message made for {@code destination}, or null. */
  private Received stranger(String destination, List<Received> received) {
    Set<String> sent = sentIds.getOrDefault(destination, Set.of());
    for (Received r : received) {
      if (!sent.contains(r.messageId())) {
        return r;
      }
    }
    return null;
  }

  private List<Received> read(String destination) {
    try {
      return List.copyOf(Objects.requireNonNull(received(destination), "received() returned null"));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("received(" + destination + ") failed", e);
    }
  }

  private static Set<String> arrivedIds(List<Received> received) {
    Set<String> ids = new LinkedHashSet<>();
    for (Received r : received) {
      ids.add(r.messageId());
    }
    return ids;
  }

  private static List<Received> copiesOf(List<Received> received, UUID id) {
    List<Received> copies = new ArrayList<>();
    for (Received r : received) {
      if (id.toString().equals(r.messageId())) {
        copies.add(r);
      }
    }
    return copies;
  }

  /** Asserts that {@code r} is {@code m} as sent: its id, payload, headers and, with keys, its aggregate id. */
  protected void assertArrivedAsSent(Received r, OutboxMessage m) {
    assertThat(r.messageId()).as("the message id of %s", r).isEqualTo(m.id().toString());
    assertThat(r.payload()).as("the payload bytes of %s", r).isEqualTo(m.payload().getBytes(StandardCharsets.UTF_8));
    for (Map.Entry<String, String> h : m.headers().entrySet()) {
      assertThat(r.header(h.getKey())).as("header %s of %s", h.getKey(), r).isEqualTo(h.getValue());
    }
    if (keysByAggregate()) {
      assertThat(r.key()).as("the ordering key of %s", r).isEqualTo(m.aggregateId());
    }
  }

  /** Each aggregate's message ids in the order their first copies arrived. */
  private static Map<String, List<String>> arrivalOrder(List<Received> received, List<OutboxMessage> sent) {
    Map<String, String> aggregateOf = new LinkedHashMap<>();
    for (OutboxMessage m : sent) {
      aggregateOf.put(m.id().toString(), m.aggregateId());
    }
    Map<String, List<String>> order = new LinkedHashMap<>();
    Set<String> seen = new HashSet<>();
    for (Received r : received) {
      String aggregate = aggregateOf.get(r.messageId());
      if (aggregate != null && seen.add(r.messageId())) {
        order.computeIfAbsent(aggregate, k -> new ArrayList<>()).add(r.messageId());
      }
    }
    return order;
  }

  private static Map<String, List<String>> sendOrder(List<OutboxMessage> sent) {
    Map<String, List<String>> order = new LinkedHashMap<>();
    for (OutboxMessage m : sent) {
      order.computeIfAbsent(m.aggregateId(), k -> new ArrayList<>()).add(m.id().toString());
    }
    return order;
  }

  private static Map<String, OutboxMessage> byId(List<OutboxMessage> messages) {
    Map<String, OutboxMessage> byId = new LinkedHashMap<>();
    for (OutboxMessage m : messages) {
      byId.put(m.id().toString(), m);
    }
    return byId;
  }

  // -------------------------------------------------------------------------------------------------------- tests

  @Test
  void aDeliveredMessageArrivesOnceWithTheEventIdAsMessageIdAndItsPayloadAndHeaders() throws Exception {
    String d = destination();
    OutboxMessage m = message(d, aggregate());

    DeliveryResult result = transport.send(m);

    assertThat(result).as("send's result").isNotNull();
    assertThat(result.kind()).as("send's result: %s", result).isEqualTo(DeliveryResult.Kind.DELIVERED);
    List<Received> arrived = awaitArrivals(d, List.of(m.id()));
    assertThat(arrived).as("what arrived at %s", d).hasSize(1);
    assertArrivedAsSent(arrived.get(0), m);
  }

  @Test
  void sendAllDeliversEveryMessageOfABatchWithOneResultEach() throws Exception {
    String d = destination();
    List<String> aggregates = List.of(aggregate(), aggregate(), aggregate());
    List<OutboxMessage> batch = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      batch.add(message(d, aggregates.get(i % aggregates.size())));
    }

    List<DeliveryResult> results = transport.sendAll(batch);
    List<DeliveryResult> none = transport.sendAll(List.of());

    assertResultsFor(batch, results);
    assertDelivered(batch, results);
    assertThat(none).as("sendAll of an empty batch").isNotNull().isEmpty();
    List<Received> arrived = awaitArrivals(d, batch.stream().map(OutboxMessage::id).toList());
    Map<String, OutboxMessage> sent = byId(batch);
    assertThat(arrivedIds(arrived)).as("the ids that arrived").containsExactlyInAnyOrderElementsOf(sent.keySet());
    for (Received r : arrived) {
      assertArrivedAsSent(r, sent.get(r.messageId()));
    }
  }

  @Test
  void aBatchAcrossALiveAndABrokenDestinationGetsEachMessageItsOwnResultInOrder() throws Exception {
    String live = destination();
    String broken = destination();
    startOutage(broken);
    List<OutboxMessage> batch = new ArrayList<>();
    for (boolean toLive : new boolean[] {true, false, false, true, true, false, true}) { // no palindrome
      batch.add(message(toLive ? live : broken, aggregate()));
    }

    List<DeliveryResult> results = isolatesFailures() ? transport.sendAll(batch) : sendAllAsRelay(batch);

    assertResultsFor(batch, results);
    List<UUID> delivered = new ArrayList<>();
    for (int i = 0; i < batch.size(); i++) {
      OutboxMessage m = batch.get(i);
      DeliveryResult r = results.get(i);
      if (m.destination().equals(broken)) {
        assertThat(r.kind()).as("result %s, to the destination in an outage: %s", i, r).isEqualTo(outageKind());
      } else if (isolatesFailures()) {
        assertThat(r.kind()).as("result %s, to the live destination: %s", i, r)
            .isEqualTo(DeliveryResult.Kind.DELIVERED);
      }
      if (r.isDelivered()) {
        delivered.add(m.id());
      }
    }
    List<Received> arrived = awaitArrivals(live, delivered);
    Map<String, OutboxMessage> sent = byId(batch);
    for (Received r : arrived) {
      assertArrivedAsSent(r, sent.get(r.messageId()));
    }
  }

  @Test
  void messagesOfOneAggregateArriveInTheOrderTheyWereSent() throws Exception {
    String d = destination();
    String a = aggregate();
    String b = aggregate();
    List<OutboxMessage> oneByOne = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      oneByOne.add(message(d, i % 2 == 0 ? a : b));
    }

    for (OutboxMessage m : oneByOne) {
      DeliveryResult r = transport.send(m);
      assertThat(r.kind()).as("the result of %s: %s", m.id(), r).isEqualTo(DeliveryResult.Kind.DELIVERED);
    }
    List<OutboxMessage> sent = new ArrayList<>(oneByOne);
    if (ordersPerAggregate()) {
      List<OutboxMessage> batch = new ArrayList<>();
      List<String> three = List.of(aggregate(), aggregate(), aggregate());
      for (int i = 0; i < 15; i++) {
        batch.add(message(d, three.get(i % 3)));
      }
      List<DeliveryResult> results = transport.sendAll(batch);
      assertResultsFor(batch, results);
      assertDelivered(batch, results);
      sent.addAll(batch);
    }

    List<Received> arrived = awaitArrivals(d, sent.stream().map(OutboxMessage::id).toList());
    assertThat(arrivalOrder(arrived, sent)).as("each aggregate's messages in the order they arrived")
        .isEqualTo(sendOrder(sent));
    Map<String, OutboxMessage> sentById = byId(sent);
    for (Received r : arrived) {
      assertArrivedAsSent(r, sentById.get(r.messageId()));
    }
  }

  @Test
  void aRedeliveryOfAMessageCarriesTheSameMessageId() throws Exception {
    String d = destination();
    OutboxMessage first = message(d, aggregate());
    OutboxMessage again = nextAttempt(first);

    DeliveryResult r1 = transport.send(first);
    DeliveryResult r2 = transport.send(again);

    assertThat(r1.kind()).as("the first send: %s", r1).isEqualTo(DeliveryResult.Kind.DELIVERED);
    assertThat(r2.kind()).as("the redelivery: %s", r2).isEqualTo(DeliveryResult.Kind.DELIVERED);
    int expected = dropsDuplicates() ? 1 : 2;
    List<Received> copies = awaitCopies(d, first.id(), expected);
    assertThat(copies).as("the copies of %s that arrived", first.id()).hasSize(expected);
    for (Received r : copies) {
      assertArrivedAsSent(r, first);
    }
    assertThat(read(d)).as("everything at %s", d).hasSize(expected);
  }

  @Test
  void duringAnOutageNoMessageIsReportedDelivered() throws Exception {
    String d = destination();
    OutboxMessage before = message(d, aggregate());
    DeliveryResult beforeResult = transport.send(before);
    assertThat(beforeResult.kind()).as("before the outage: %s", beforeResult).isEqualTo(DeliveryResult.Kind.DELIVERED);
    awaitArrivals(d, List.of(before.id()));
    startOutage(d);
    OutboxMessage single = message(d, aggregate());
    List<OutboxMessage> batch = List.of(message(d, aggregate()), message(d, aggregate()), message(d, aggregate()));

    DeliveryResult singleResult = sendAsRelay(single);
    List<DeliveryResult> batchResults = sendAllAsRelay(batch);

    assertThat(singleResult.kind()).as("send during the outage: %s", singleResult).isEqualTo(outageKind());
    for (int i = 0; i < batch.size(); i++) {
      assertThat(batchResults.get(i).kind()).as("sendAll during the outage, result %s: %s", i, batchResults.get(i))
          .isEqualTo(outageKind());
    }
  }

  @Test
  void afterAnOutageEndsSendingWorksAgain() throws Exception {
    String d = destination();
    startOutage(d);
    OutboxMessage m = message(d, aggregate());
    DeliveryResult during = sendAsRelay(m);
    assertThat(during.kind()).as("send during the outage: %s", during).isEqualTo(outageKind());

    endOutage(d);
    long deadline = System.nanoTime() + recoveryTimeout().toNanos();
    OutboxMessage attempt = nextAttempt(m);
    DeliveryResult r = sendAsRelay(attempt);
    List<DeliveryResult> failures = new ArrayList<>();
    while (!r.isDelivered() && System.nanoTime() - deadline < 0) {
      assertThat(r.kind()).as("a re-send after the outage ended: %s", r).isIn(DeliveryResult.Kind.RETRY, outageKind());
      failures.add(r);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // the relay's backoff, shortened
      attempt = nextAttempt(attempt);
      r = sendAsRelay(attempt);
    }
    OutboxMessage next = message(d, aggregate());
    DeliveryResult nextResult = r.isDelivered() ? sendAsRelay(next) : null;

    assertThat(r.kind()).as("the re-send %s within %s after the outage ended (%s failed before: %s)",
        attempt.attempt(), recoveryTimeout(), failures.size(), failures.isEmpty() ? "" : failures.get(0))
        .isEqualTo(DeliveryResult.Kind.DELIVERED);
    assertThat(nextResult.kind()).as("the next message's first attempt: %s", nextResult)
        .isEqualTo(DeliveryResult.Kind.DELIVERED);
    List<Received> arrived = awaitArrivals(d, List.of(m.id(), next.id()));
    for (Received copy : arrived) {
      assertArrivedAsSent(copy, copy.messageId().equals(m.id().toString()) ? m : next);
    }
  }

  @Test
  void severalThreadsSendingAtOnceEachGetTheirOwnResults() throws Exception {
    String d = destination();
    int threads = 4;
    int perThread = 5;
    List<List<OutboxMessage>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      List<OutboxMessage> mine = new ArrayList<>();
      for (int i = 0; i < perThread; i++) {
        mine.add(message(d, aggregate()));
      }
      work.add(mine);
    }
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<List<DeliveryResult>> results = new ArrayList<>();
    try {
      List<Future<List<DeliveryResult>>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        List<OutboxMessage> mine = work.get(t);
        boolean batched = t % 2 == 0;
        futures.add(pool.submit(() -> {
          start.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
          if (batched) {
            return transport.sendAll(mine);
          }
          List<DeliveryResult> own = new ArrayList<>();
          for (OutboxMessage m : mine) {
            own.add(transport.send(m));
          }
          return own;
        }));
      }
      for (Future<List<DeliveryResult>> f : futures) {
        results.add(f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
      }
    } finally {
      pool.shutdownNow();
    }

    List<OutboxMessage> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      assertResultsFor(work.get(t), results.get(t));
      assertDelivered(work.get(t), results.get(t));
      all.addAll(work.get(t));
    }
    List<Received> arrived = awaitArrivals(d, all.stream().map(OutboxMessage::id).toList());
    Map<String, OutboxMessage> sent = byId(all);
    assertThat(arrivedIds(arrived)).as("the ids that arrived").containsExactlyInAnyOrderElementsOf(sent.keySet());
    for (Received r : arrived) {
      assertArrivedAsSent(r, sent.get(r.messageId()));
    }
  }
}
