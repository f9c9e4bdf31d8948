package dev.idem.bench.outbox;

import dev.idem.bench.outbox.BenchSupport.Cpu;
import dev.idem.bench.outbox.ConsumerComparison.LastCommit;
import dev.idem.bench.outbox.ConsumerComparison.Sizes;
import dev.idem.core.UuidV7;
import dev.idem.nats.NatsInboxConsumer;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * NATS JetStream consumer throughput with the inbox on PostgreSQL against the same consumer without it, side by side
 * in one run, by the method of {@link KafkaInboxBench} ({@link ConsumerComparison}).
 *
 * <p>The benchmark creates a file-backed stream {@code bench-nats-<hex>} on the server at {@code --url} (default
 * {@code nats://127.0.0.1:4222}) and fills it once with {@code --events} messages (256 B JSON, a UUIDv7 as
 * {@code Nats-Msg-Id}, as {@code NatsJetStreamTransport} sends the outbox's ids); it deletes the stream at the end.
 * Every measurement reads the whole stream through a new durable pull consumer (explicit acks), fetching
 * {@code --batch} messages at a time (default 64, the inbox consumer's default), with one PostgreSQL transaction and
 * one {@code ack} per message; the clock runs from creating the durable consumer to the commit of the last message's
 * transaction.
 *
 * <ul>
 *   <li>{@code baseline}: that consumer written by hand on jnats: fetch, then per message {@code BEGIN}, the effect
 *       (one {@code INSERT} of the message id), {@code COMMIT}, {@code ack}.</li>
 *   <li>{@code inbox}: {@link NatsInboxConsumer} with the same effect in its handler: per message an
 *       {@code inProgress} to the server, the inbox row ({@code INSERT ... ON CONFLICT DO NOTHING RETURNING}), the
 *       effect, the probe, {@code COMMIT}, then the ack.</li>
 * </ul>
 * The inbox and effect tables hold {@code --prefill} rows from the start, analysed. CPU per event is read from
 * {@code /proc}: this JVM, the PostgreSQL backends of its pool, and the server ({@code nats-server}).
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.NatsInboxBench [--events 20000] [--repeats 3]
 *     [--batch 64] [--prefill 100000] [--url nats://127.0.0.1:4222] [--profile false]
 *     [--synchronous-commit on]
 * </pre>
 * {@code --profile true} runs each variant once through a timing JDBC wrapper instead and prints where the time goes;
 * {@code --synchronous-commit off} takes the WAL flush out of every commit (see {@link InboxTables#create}).
 */
public final class NatsInboxBench implements ConsumerComparison.Consumers, AutoCloseable {
  private static final Duration MEASUREMENT_LIMIT = Duration.ofMinutes(10);
  private static final Duration ACK_WAIT = Duration.ofSeconds(30);

  private final int events;
  private final int batch;
  private final int repeats;
  private final InboxTables tables;
  private final Connection nats;
  private final JetStreamManagement jsm;
  private final String stream;
  private final String subject;

  private NatsInboxBench(Sizes sizes, InboxTables tables, Connection nats, String stream) throws IOException {
    this.events = sizes.events();
    this.batch = sizes.batch();
    this.repeats = sizes.repeats();
    this.tables = tables;
    this.nats = nats;
    this.jsm = nats.jetStreamManagement();
    this.stream = stream;
    this.subject = stream.replace('-', '.');
  }

  public static void main(String[] args) throws Exception {
    try (NatsInboxBench bench = open(BenchSupport.flags(args))) {
      System.out.println(BenchSupport.fmt("NATS inbox benchmark: %d events, batch %d, %d repeats, stream %s, load %s",
          bench.events, bench.batch, bench.repeats, bench.stream, BenchSupport.loadAverage()));
      bench.comparison().measureOneByOne(bench, bench.repeats);
    }
  }

  /** Creates the tables and the filled stream from the flags ({@code --events}, {@code --batch}, ...). */
  static NatsInboxBench open(Map<String, String> f) throws Exception {
    Sizes sizes = Sizes.of(f, "batch", 64);
    String url = f.getOrDefault("url", System.getProperty("idem.test.nats.url", "nats://127.0.0.1:4222"));
    Connection nats;
    try {
      nats = Nats.connect(Options.builder().server(url).connectionTimeout(Duration.ofSeconds(5))
          .connectionName("idem-bench").build());
    } catch (IOException e) {
      throw new IllegalStateException("NATS is not reachable at " + url + " (--url): " + e, e);
    }
    InboxTables tables = null;
    NatsInboxBench bench = null;
    try {
      tables = InboxTables.create(f, "nbench", sizes.prefill(), "nats:prefill");
      bench = new NatsInboxBench(sizes, tables, nats,
          BenchSupport.uniqueTable("bench-nats").replace('_', '-'));
      bench.fill();
      return bench;
    } catch (Exception e) {
      if (bench != null) {
        bench.close();
      } else {
        if (tables != null) {
          tables.close();
        }
        nats.close();
      }
      throw e;
    }
  }

  ConsumerComparison comparison() {
    return new ConsumerComparison(tables, events, () -> Cpu.ticksOf("nats-server"));
  }

  /** Creates the stream and publishes the messages, at most 1,000 unconfirmed at a time. */
  private void fill() throws Exception {
    jsm.addStream(StreamConfiguration.builder().name(stream).subjects(subject).storageType(StorageType.File)
        .build());
    JetStream js = nats.jetStream();
    List<CompletableFuture<PublishAck>> window = new ArrayList<>();
    for (int i = 0; i < events; i++) {
      Headers headers = new Headers().add(NatsInboxConsumer.MESSAGE_ID, UuidV7.next().toString());
      byte[] body = BenchSupport.event(i, 256, null).payload().getBytes(StandardCharsets.UTF_8);
      window.add(js.publishAsync(NatsMessage.builder().subject(subject).headers(headers).data(body).build()));
      if (window.size() == 1000 || i == events - 1) {
        for (CompletableFuture<PublishAck> ack : window) {
          ack.get(60, TimeUnit.SECONDS);
        }
        window.clear();
      }
    }
    long stored = jsm.getStreamInfo(stream).getStreamState().getMsgCount();
    if (stored != events) {
      throw new IllegalStateException("stream " + stream + " holds " + stored + " messages, not " + events);
    }
  }

  @Override
  public long consume(String variant, String style) throws Exception {
    String durable = "bench-" + UUID.randomUUID();
    try {
      boolean firstDeliveryOrder = variant.equals(ConsumerComparison.FIRST_DELIVERIES);
      return variant.equals("inbox") || firstDeliveryOrder ? consumeWithInbox(durable, firstDeliveryOrder)
          : consumeByHand(durable);
    } finally {
      jsm.deleteConsumer(stream, durable);
    }
  }

  private long consumeWithInbox(String durable, boolean firstDeliveryOrder) throws Exception {
    LastCommit last = new LastCommit(events);
    NatsInboxConsumer consumer = NatsInboxConsumer.builder(nats, tables.inbox, durable, stream, subject)
        .batchSize(batch).firstDeliveryOrder(firstDeliveryOrder).ackWait(ACK_WAIT).listener(last.listener())
        .handler(tables.effectHandler()).build();
    try (consumer) {
      consumer.start();
      return last.await(MEASUREMENT_LIMIT, "the inbox consumer");
    }
  }

  /** The same consumer by hand: the same durable consumer, fetch, per message a transaction, then the ack. */
  private long consumeByHand(String durable) throws IOException, JetStreamApiException {
    jsm.addOrUpdateConsumer(stream, ConsumerConfiguration.builder().durable(durable).filterSubject(subject)
        .ackPolicy(AckPolicy.Explicit).ackWait(ACK_WAIT).maxDeliver(-1).build());
    JetStreamSubscription sub = nats.jetStream().subscribe(subject, PullSubscribeOptions.bind(stream, durable));
    long deadline = System.nanoTime() + MEASUREMENT_LIMIT.toNanos();
    int committed = 0;
    long end = 0;
    try {
      while (committed < events) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the hand-written consumer committed " + committed + " of " + events
              + " messages in " + MEASUREMENT_LIMIT);
        }
        for (Message m : sub.fetch(batch, Duration.ofMillis(500))) {
          try {
            tables.commitEffect(m.getHeaders().getFirst(NatsInboxConsumer.MESSAGE_ID));
          } catch (Exception e) {
            m.nak();
            throw new IllegalStateException("the hand-written consumer failed after " + committed + " of " + events
                + " messages: " + e, e);
          }
          if (++committed == events) {
            end = System.nanoTime();
          }
          m.ack();
        }
      }
      return end;
    } finally {
      sub.unsubscribe();
    }
  }

  @Override
  public void close() {
    try {
      jsm.deleteStream(stream);
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      System.err.println("could not delete stream " + stream + ": " + e);
    }
    try {
      nats.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    tables.close();
  }
}
