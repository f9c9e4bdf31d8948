package dev.idem.bench.outbox;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import dev.idem.bench.outbox.BenchSupport.Cpu;
import dev.idem.bench.outbox.ConsumerComparison.LastCommit;
import dev.idem.bench.outbox.ConsumerComparison.Sizes;
import dev.idem.core.UuidV7;
import dev.idem.rabbitmq.RabbitMqInboxConsumer;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * RabbitMQ consumer throughput with the inbox on PostgreSQL against the same consumer without it, side by side in one
 * run, by the method of {@link KafkaInboxBench} ({@link ConsumerComparison}).
 *
 * <p>The benchmark declares a durable classic queue {@code bench-<hex>} on the broker at {@code --uri} (default
 * {@code amqp://guest:guest@127.0.0.1:5672}) and deletes it at the end. Before every measurement, outside the clock,
 * it publishes {@code --events} persistent messages (256 B JSON, a fresh UUIDv7 as {@code message-id}, as
 * {@code RabbitMqTransport} sends the outbox's ids) with publisher confirms. A measurement consumes them all on one
 * channel with {@code basic.qos} {@code --prefetch} (default 32, the inbox consumer's default), one PostgreSQL
 * transaction and one {@code basic.ack} per message; the clock runs from opening the consumer's connection to the
 * commit of the last message's transaction.
 *
 * <ul>
 *   <li>{@code baseline}: that consumer written by hand on amqp-client: {@code BEGIN}, the effect (one {@code INSERT}
 *       of the message id), {@code COMMIT}, then {@code basic.ack}.</li>
 *   <li>{@code inbox}: {@link RabbitMqInboxConsumer} with the same effect in its handler: per message, the inbox
 *       row ({@code INSERT ... ON CONFLICT DO NOTHING RETURNING}), the effect, the probe, {@code COMMIT}, then the
 *       ack.</li>
 * </ul>
 * The inbox and effect tables hold {@code --prefill} rows from the start, analysed. CPU per event is read from
 * {@code /proc}: this JVM, the PostgreSQL backends of its pool, and the broker ({@code beam.smp}).
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.RabbitMqInboxBench [--events 20000] [--repeats 3]
 *     [--prefetch 32] [--prefill 100000] [--uri amqp://guest:guest@127.0.0.1:5672] [--profile false]
 *     [--synchronous-commit on]
 * </pre>
 * {@code --profile true} runs each variant once through a timing JDBC wrapper instead and prints where the time goes;
 * {@code --synchronous-commit off} takes the WAL flush out of every commit (see {@link InboxTables#create}).
 */
public final class RabbitMqInboxBench implements ConsumerComparison.Consumers, AutoCloseable {
  private static final Duration MEASUREMENT_LIMIT = Duration.ofMinutes(10);

  private final int events;
  private final int prefetch;
  private final int repeats;
  private final InboxTables tables;
  private final ConnectionFactory factory;
  private final Connection admin;
  private final String queue;
  private final String uri;
  private long published;

  private RabbitMqInboxBench(Sizes sizes, InboxTables tables, ConnectionFactory factory, Connection admin,
      String queue, String uri) {
    this.uri = uri;
    this.events = sizes.events();
    this.prefetch = sizes.batch();
    this.repeats = sizes.repeats();
    this.tables = tables;
    this.factory = factory;
    this.admin = admin;
    this.queue = queue;
  }

  public static void main(String[] args) throws Exception {
    try (RabbitMqInboxBench bench = open(BenchSupport.flags(args))) {
      System.out.println(BenchSupport.fmt("RabbitMQ inbox benchmark: %d events, prefetch %d, %d repeats, queue %s,"
          + " load %s", bench.events, bench.prefetch, bench.repeats, bench.queue, BenchSupport.loadAverage()));
      bench.comparison().measureOneByOne(bench, bench.repeats);
    }
  }

  /** Creates the tables and the queue from the flags ({@code --events}, {@code --prefetch}, {@code --prefill}...). */
  public static RabbitMqInboxBench open(Map<String, String> f) throws Exception {
    Sizes sizes = Sizes.of(f, "prefetch", 32);
    String uri = f.getOrDefault("uri", System.getProperty("idem.test.rabbitmq.uri",
        "amqp://guest:guest@127.0.0.1:5672"));
    ConnectionFactory factory = new ConnectionFactory();
    try {
      factory.setUri(uri);
    } catch (URISyntaxException | GeneralSecurityException e) {
      throw new IllegalArgumentException("--uri is not an AMQP URI: " + uri, e);
    }
    factory.setConnectionTimeout(5_000);
    InboxTables tables = InboxTables.create(f, "rbench", sizes.prefill(), "rabbitmq:prefill");
    try {
      Connection admin = factory.newConnection("idem-bench-admin");
      String queue = BenchSupport.uniqueTable("bench-rabbitmq").replace('_', '-');
      try (Channel ch = admin.createChannel()) {
        ch.queueDeclare(queue, true, false, false, Map.of());
      }
      return new RabbitMqInboxBench(sizes, tables, factory, admin, queue, uri);
    } catch (IOException | TimeoutException | RuntimeException e) {
      tables.close();
      throw new IllegalStateException("RabbitMQ is not reachable at " + uri.replaceFirst("//[^@/]*@", "//")
          + " (--uri): " + e, e);
    }
  }

  /** The measurements of this benchmark: its tables, its events, the broker's CPU. */
  public ConsumerComparison comparison() {
    return new ConsumerComparison(tables, events, () -> Cpu.ticksOf("beam.smp"));
  }

  /** Publishes the measurement's messages, persistent, with confirms; the queue then holds exactly those. */
  @Override
  public void prepare(String variant, String style) throws Exception {
    try (Channel ch = admin.createChannel()) {
      ch.confirmSelect();
      for (int i = 0; i < events; i++) {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(UuidV7.next().toString())
            .contentType("application/json").deliveryMode(2).build();
        byte[] body = BenchSupport.event(published++, 256, null).payload().getBytes(StandardCharsets.UTF_8);
        ch.basicPublish("", queue, props, body);
        if (i % 1000 == 999) {
          ch.waitForConfirmsOrDie(60_000);
        }
      }
      ch.waitForConfirmsOrDie(60_000);
      long ready = ch.queueDeclarePassive(queue).getMessageCount();
      if (ready != events) {
        throw new IllegalStateException("queue " + queue + " holds " + ready + " messages before a measurement of "
            + events + "; a run left messages behind");
      }
    }
  }

  @Override
  public long consume(String variant, String style) throws Exception {
    LastCommit last = new LastCommit(events);
    boolean firstDeliveryOrder = variant.equals(ConsumerComparison.FIRST_DELIVERIES);
    long end = variant.equals("inbox") || firstDeliveryOrder ? consumeWithInbox(last, firstDeliveryOrder)
        : consumeByHand(last);
    requireDrained(variant);
    return end;
  }

  /** Fails when the queue holds messages after {@code variant}'s measurement. */
  public void requireDrained(String variant) throws IOException, TimeoutException {
    try (Channel ch = admin.createChannel()) {
      long left = ch.queueDeclarePassive(queue).getMessageCount();
      if (left != 0) {
        throw new IllegalStateException(variant + " left " + left + " messages on queue " + queue);
      }
    }
  }

  /** The queue the measurements consume, declared by {@link #open} and deleted by {@link #close}. */
  public String queue() {
    return queue;
  }

  /** The broker's AMQP URI ({@code --uri}). */
  public String uri() {
    return uri;
  }

  private long consumeWithInbox(LastCommit last, boolean firstDeliveryOrder) throws Exception {
    RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(factory, tables.inbox, "bench-" + UUID.randomUUID(),
        queue).prefetch(prefetch).firstDeliveryOrder(firstDeliveryOrder).listener(last.listener())
        .handler(tables.effectHandler()).build();
    try (consumer) {
      consumer.start();
      return last.await(MEASUREMENT_LIMIT, "the inbox consumer");
    } // closing waits for the message in hand, so its ack is sent
  }

  /** The same consumer by hand: one channel, {@code basic.qos}, per message a transaction, then the ack. */
  private long consumeByHand(LastCommit last) throws Exception {
    CountDownLatch acked = new CountDownLatch(events);
    try (Connection connection = factory.newConnection("idem-bench-baseline");
        Channel ch = connection.createChannel()) {
      ch.basicQos(prefetch);
      ch.basicConsume(queue, false, (tag, delivery) -> onDelivery(ch, delivery, last, acked), tag -> { });
      long end = last.await(MEASUREMENT_LIMIT, "the hand-written consumer");
      if (!acked.await(MEASUREMENT_LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the hand-written consumer acknowledged " + (events - acked.getCount())
            + " of " + events + " messages");
      }
      return end;
    }
  }

  private void onDelivery(Channel ch, Delivery delivery, LastCommit last, CountDownLatch acked) throws IOException {
    long tag = delivery.getEnvelope().getDeliveryTag();
    try {
      tables.commitEffect(delivery.getProperties().getMessageId());
    } catch (Exception e) {
      last.failed(e);
      ch.basicNack(tag, false, true);
      return;
    }
    last.committed(1);
    ch.basicAck(tag, false);
    acked.countDown();
  }

  @Override
  public void close() {
    try (Channel ch = admin.createChannel()) {
      ch.queueDelete(queue);
    } catch (IOException | TimeoutException | RuntimeException e) {
      System.err.println("could not delete queue " + queue + ": " + e);
    }
    try {
      admin.close(5_000);
    } catch (IOException | RuntimeException e) {
      admin.abort(1_000);
    }
    tables.close();
  }
}
