package dev.idem.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Return;
import com.rabbitmq.client.ShutdownSignalException;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Publishes outbox events to RabbitMQ with publisher confirms: an event counts as delivered only once the broker has
 * confirmed it, that is, taken responsibility for it (written it to disk for a durable queue).
 *
 * <h2>Destinations</h2>
 * A destination {@code rabbitmq:<exchange>/<routingKey>} publishes to {@code exchange} with {@code routingKey}:
 * <ul>
 *   <li>{@code rabbitmq:payments/payment.succeeded}: exchange {@code payments}, routing key
 *       {@code payment.succeeded};</li>
 *   <li>{@code rabbitmq:payments} or {@code rabbitmq:payments/}: exchange {@code payments}, the event type as the
 *       routing key;</li>
 *   <li>{@code rabbitmq:/billing-events}: the default exchange (named {@code ""}), which routes to the queue named by
 *       the routing key, here {@code billing-events};</li>
 *   <li>{@code rabbitmq} alone: the {@link Builder#defaultExchange default exchange of this transport}, with the event
 *       type as the routing key; without one configured, the event is dead at once.</li>
 * </ul>
 *
 * <h2>Messages</h2>
 * The body is the event's JSON payload. Properties: {@code message-id} = the event id (the same on every attempt, so
 * that an {@code Inbox} drops redeliveries), {@code type} = the event type, {@code content-type} =
 * {@code application/json}, {@code delivery-mode} 2 (persistent), {@code timestamp} = when it was enqueued, and as
 * headers the event's headers plus {@code aggregate-type} and {@code aggregate-id}.
 *
 * <h2>Outcomes</h2>
 * <ul>
 *   <li>Confirmed by the broker: delivered.</li>
 *   <li>An exchange, routing key, event type or header name longer than AMQP's 255 UTF-8 bytes: dead at once
 *       (checked before publishing).</li>
 *   <li>Nacked, returned as unroutable (messages are published {@code mandatory}, so a routing key that matches no
 *       queue is a failure, not a silent drop), unconfirmed within the confirm timeout (default 15 s), refused by the
 *       broker (e.g. a missing exchange) or lost with the connection: retried with the relay's backoff.</li>
 *   <li>While the broker blocks the connection (a memory or disk alarm): retried at once, without publishing.</li>
 *   <li>A publish the client fails (the channel is then discarded, since its confirm numbering can no longer be
 *       trusted): that message and the rest of the batch are retried.</li>
 * </ul>
 * The confirm timeout bounds the whole {@link #sendAll} call ({@link Builder#confirmTimeout}): messages not published
 * when it has passed are retried. RabbitMQ itself does not drop duplicates: a retry after a lost confirm publishes the
 * event again, and consumers deduplicate by {@code message-id} ({@link RabbitMqInboxConsumer} does).
 *
 * <pre>{@code
 * ConnectionFactory factory = new ConnectionFactory();
 * factory.setUri("amqp://guest:guest@127.0.0.1:5672");
 * try (RabbitMqTransport rabbit = RabbitMqTransport.builder(factory).name("orders").build();
 *      OutboxRelay relay = OutboxRelay.builder(outbox).route("rabbitmq", rabbit).build()) {
 *   relay.start();
 *   // events enqueued with .destination("rabbitmq:payments/payment.succeeded") are published to exchange payments
 * }
 * }</pre>
 *
 * <p>Thread-safe. AMQP channels are not, so each call borrows a channel of its own from a small pool (one per
 * concurrent caller, at most {@link Builder#maxIdleChannels} kept idle). Built from a {@link ConnectionFactory}, the
 * transport owns its connection: when the connection is lost, the sends in flight return retry and the next send opens
 * a new one (the factory's automatic recovery is switched off for this connection, on a copy of the factory). Built
 * from a {@link Connection}, the caller owns it and its recovery; the transport only opens channels on it.
 */
public final class RabbitMqTransport implements OutboxTransport {
  private static final System.Logger LOG = System.getLogger(RabbitMqTransport.class.getName());
  private static final String CONTENT_TYPE = "application/json";

  private final String name;
  private final ConnectionFactory factory;
  private final String defaultExchange;
  private final Duration confirmTimeout;
  private final int maxIdleChannels;
  private final ReentrantLock connectionLock = new ReentrantLock();
  /** Listens on the caller's connection (a connection the transport opens gets listeners of its own). */
  private final BlockedListener blockedListener;
  private volatile String blockedReason;
  private final ConcurrentLinkedDeque<PublishChannel> idle = new ConcurrentLinkedDeque<>();
  private volatile Connection connection;
  private volatile boolean closed;

  private RabbitMqTransport(Builder b) {
    this.name = b.name;
    this.defaultExchange = b.defaultExchange;
    this.confirmTimeout = b.confirmTimeout;
    this.maxIdleChannels = b.maxIdleChannels;
    if (b.factory != null) {
      ConnectionFactory copy = b.factory.clone();
      copy.setAutomaticRecoveryEnabled(false);
      int bound = (int) Math.min(Integer.MAX_VALUE, Math.max(1, confirmTimeout.toMillis()));
      copy.setConnectionTimeout(atMost(copy.getConnectionTimeout(), bound));
      copy.setHandshakeTimeout(atMost(copy.getHandshakeTimeout(), bound));
      copy.setChannelRpcTimeout(atMost(copy.getChannelRpcTimeout(), bound));
      this.factory = copy;
      this.blockedListener = null;
    } else {
      this.factory = null;
      this.connection = b.connection;
      this.blockedListener = b.connection.addBlockedListener(this::blocked, this::unblocked);
    }
  }

  private void blocked(String reason) {
    blockedReason = reason == null || reason.isEmpty() ? "no reason given" : reason;
    LOG.log(System.Logger.Level.WARNING, "transport " + name + ": RabbitMQ blocked the connection (" + blockedReason
        + "); sends return retry until it is unblocked");
  }

  private void unblocked() {
    blockedReason = null;
    LOG.log(System.Logger.Level.INFO, "transport " + name + ": RabbitMQ unblocked the connection");
  }

  /** {@code timeout} (where 0 means none) bounded by {@code bound}. */
  private static int atMost(int timeout, int bound) {
    return timeout <= 0 ? bound : Math.min(timeout, bound);
  }

  /** The longest exchange, routing key, type or header name AMQP carries (a short string), in UTF-8 bytes. */
  static final int MAX_SHORT_STRING = 255;

  /** A transport that opens (and re-opens) its own connection from {@code factory}; the factory is not modified. */
  public static Builder builder(ConnectionFactory factory) {
    return new Builder(Objects.requireNonNull(factory, "factory"), null);
  }

  /** A transport publishing on the caller's {@code connection}, which it never closes. */
  public static Builder builder(Connection connection) {
    return new Builder(null, Objects.requireNonNull(connection, "connection"));
  }

  public String name() {
    return name;
  }

  /** The exchange and routing key a destination detail resolves to; null when it names no exchange. */
  static Target resolve(String detail, String eventType, String defaultExchange) {
    if (detail.isEmpty()) {
      return defaultExchange == null ? null : new Target(defaultExchange, eventType);
    }
    int slash = detail.indexOf('/');
    if (slash < 0) {
      return new Target(detail, eventType);
    }
    String routingKey = detail.substring(slash + 1);
    return new Target(detail.substring(0, slash), routingKey.isEmpty() ? eventType : routingKey);
  }

  /** Where one message goes. */
  record Target(String exchange, String routingKey) {}

  @Override
  public DeliveryResult send(OutboxMessage message) {
    return sendAll(List.of(message)).get(0);
  }

  /**
   * Publishes the batch on one channel, then waits for the broker's confirms, up to the confirm timeout for the whole
   * batch. Never throws: every failure becomes a {@link DeliveryResult}.
   */
  @Override
  public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    int n = messages.size();
    DeliveryResult[] results = new DeliveryResult[n];
    Target[] targets = new Target[n];
    boolean any = false;
    for (int i = 0; i < n; i++) {
      OutboxMessage m = messages.get(i);
      targets[i] = resolve(m.destinationDetail(), m.type(), defaultExchange);
      String tooLong;
      if (targets[i] == null) {
        results[i] = DeliveryResult.permanent("destination '" + m.destination() + "' names no exchange and transport "
            + name + " has no default exchange: use rabbitmq:<exchange>/<routingKey>, or rabbitmq:/<queue>", null);
      } else if ((tooLong = tooLong(m, targets[i])) != null) {
        results[i] = DeliveryResult.permanent("destination '" + m.destination() + "': " + tooLong
            + " is longer than the " + MAX_SHORT_STRING + " UTF-8 bytes AMQP allows", null);
      } else {
        any = true;
      }
    }
    if (any) {
      String blocked = blockedReason;
      if (blocked != null) {
        fill(results, DeliveryResult.retry("transport " + name + ": RabbitMQ blocks the connection (" + blocked
            + "), e.g. for a memory or disk alarm", null));
      } else {
        publish(messages, targets, results, System.nanoTime() + confirmTimeout.toNanos());
      }
    }
    return List.of(results);
  }

  /** What of {@code m} AMQP cannot carry, or null. */
  private static String tooLong(OutboxMessage m, Target t) {
    String[] what = {"the exchange name", "the routing key", "the event type"};
    String[] values = {t.exchange(), t.routingKey(), m.type()};
    for (int i = 0; i < what.length; i++) {
      if (utf8Length(values[i]) > MAX_SHORT_STRING) {
        return what[i];
      }
    }
    return m.headers().keySet().stream().anyMatch(h -> utf8Length(h) > MAX_SHORT_STRING) ? "a header name" : null;
  }

  private static int utf8Length(String s) {
    return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
  }

  private void publish(List<OutboxMessage> messages, Target[] targets, DeliveryResult[] results, long deadline) {
    PublishChannel channel;
    try {
      channel = borrow(deadline);
    } catch (IOException | TimeoutException | RuntimeException e) {
      fill(results, DeliveryResult.retry("transport " + name + " cannot open a RabbitMQ channel: "
          + OutboxTransport.describe(e), null));
      return;
    }
    boolean reusable = false;
    try {
      reusable = channel.publish(messages, targets, results, deadline);
    } catch (RuntimeException e) {
      fill(results, DeliveryResult.retry("transport " + name + " failed: " + OutboxTransport.describe(e), null));
    } finally {
      if (reusable) {
        giveBack(channel);
      } else {
        channel.discard();
      }
    }
  }

  /** Sets {@code r} as the result of every message that has none yet. */
  private static void fill(DeliveryResult[] results, DeliveryResult r) {
    Arrays.setAll(results, i -> results[i] != null ? results[i] : r);
  }

  private PublishChannel borrow(long deadline) throws IOException, TimeoutException {
    PublishChannel c;
    while ((c = idle.pollFirst()) != null) {
      if (c.usable()) {
        return c;
      }
      c.discard();
    }
    Channel channel = connection(deadline).createChannel();
    if (channel == null) {
      throw new IOException("RabbitMQ has no channel number left on the connection (channel_max reached)");
    }
    return new PublishChannel(channel);
  }

  private void giveBack(PublishChannel c) {
    if (closed || !c.usable() || idle.size() >= maxIdleChannels) {
      c.discard();
      return;
    }
    idle.offerFirst(c);
    if (closed && idle.remove(c)) {
      c.discard();
    }
  }

  private Connection connection(long deadline) throws IOException, TimeoutException {
    Connection c = connection;
    if (c != null && c.isOpen()) {
      return c;
    }
    boolean locked;
    try {
      locked = connectionLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for another thread opening the RabbitMQ connection", e);
    }
    if (!locked) {
      throw new TimeoutException("another thread is still opening the RabbitMQ connection after "
          + confirmTimeout.toMillis() + " ms");
    }
    try {
      c = connection;
      if (c != null && c.isOpen()) {
        return c;
      }
      if (closed) {
        throw new IllegalStateException("transport " + name + " is closed");
      }
      if (factory == null) {
        ShutdownSignalException reason = c.getCloseReason();
        throw new IOException("the RabbitMQ connection given to transport " + name + " is closed"
            + (reason == null ? "" : ": " + reason.getMessage()));
      }
      if (c != null) {
        LOG.log(System.Logger.Level.INFO, "transport " + name + " lost its RabbitMQ connection; reconnecting");
        c.abort(1_000);
        PublishChannel stale;
        while ((stale = idle.pollFirst()) != null) {
          stale.discard();
        }
      }
      blockedReason = null;
      c = factory.newConnection("idem-outbox-" + name);
      c.addBlockedListener(this::blocked, this::unblocked);
      connection = c;
      return c;
    } finally {
      connectionLock.unlock();
    }
  }

  /** Closes idle channels and, when the transport opened it, the connection. Sends after this return retry. */
  @Override
  public void close() {
    closed = true;
    PublishChannel c;
    while ((c = idle.pollFirst()) != null) {
      c.discard();
    }
    if (factory != null) {
      connectionLock.lock();
      try {
        Connection open = connection;
        connection = null;
        if (open != null && open.isOpen()) {
          try {
            open.close(5_000);
          } catch (IOException | RuntimeException e) {
            open.abort(1_000);
          }
        }
      } finally {
        connectionLock.unlock();
      }
    } else {
      try {
        connection.removeBlockedListener(blockedListener);
      } catch (RuntimeException ignored) {
        // the caller's connection, closing anyway
      }
    }
  }

  @Override
  public String toString() {
    return "RabbitMqTransport{" + name + ", confirmTimeout=" + confirmTimeout
        + (defaultExchange == null ? "" : ", defaultExchange='" + defaultExchange + '\'') + '}';
  }

  /**
   * One channel in confirm mode, used by one thread at a time. Confirms, returns and the channel's shutdown arrive on
   * the connection's I/O thread in the order the broker sent them; a return comes before the confirm of the same
   * message, so a confirmed message that was returned first is a failure.
   */
  private final class PublishChannel {
    private final Channel channel;
    private volatile Batch batch;
    private volatile boolean broken;

    PublishChannel(Channel channel) throws IOException {
      this.channel = channel;
      try {
        channel.confirmSelect();
      } catch (IOException | RuntimeException e) {
        discard();
        throw e;
      }
      channel.addReturnListener(r -> toBatch(b -> b.returned(r)));
      channel.addConfirmListener((tag, multiple) -> toBatch(b -> b.confirmed(tag, multiple, true)),
          (tag, multiple) -> toBatch(b -> b.confirmed(tag, multiple, false)));
      channel.addShutdownListener(cause -> {
        broken = true;
        toBatch(b -> b.lost("channel closed: " + cause.getMessage()));
      });
    }

    /** Hands what the broker sent to the batch under way, if any. */
    private void toBatch(Consumer<Batch> event) {
      Batch b = batch;
      if (b != null) {
        event.accept(b);
      }
    }

    boolean usable() {
      return !broken && channel.isOpen();
    }

    /** Publishes and waits for confirms; returns whether the channel may be used again. */
    boolean publish(List<OutboxMessage> messages, Target[] targets, DeliveryResult[] results, long deadline) {
      int pending = (int) Arrays.stream(results).filter(Objects::isNull).count();
      Batch b = new Batch(results.length, pending);
      batch = b;
      String stopped = null;
      for (int i = 0; i < results.length; i++) {
        if (results[i] != null) {
          continue;
        }
        if (stopped == null && blockedReason != null) {
          stopped = "RabbitMQ blocked the connection (" + blockedReason + ") during the batch; not published";
        } else if (stopped == null && System.nanoTime() - deadline >= 0) {
          stopped = "not published within the confirm timeout of " + confirmTimeout.toMillis() + " ms";
        }
        if (stopped != null) {
          b.complete(i, DeliveryResult.retry(stopped, null));
          continue;
        }
        OutboxMessage m = messages.get(i);
        b.expect(m.id().toString(), i);
        long seq = channel.getNextPublishSeqNo();
        b.unconfirmed.put(seq, i);
        try {
          channel.basicPublish(targets[i].exchange(), targets[i].routingKey(), true, properties(m),
              m.payload().getBytes(StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
          // the client may have used up a publish sequence number without sending: confirms after this one would be
          // credited to the wrong messages, so publish nothing more on this channel and discard it
          b.unconfirmed.remove(seq);
          broken = true;
          b.complete(i, DeliveryResult.retry("publish to exchange '" + targets[i].exchange() + "' failed: "
              + OutboxTransport.describe(e), null));
          stopped = "not published: an earlier publish of the batch failed on the channel";
        }
      }
      boolean done;
      try {
        done = b.pending.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        done = false;
      }
      batch = null;
      DeliveryResult unconfirmed = DeliveryResult.retry("no publisher confirm from RabbitMQ within "
          + confirmTimeout.toMillis() + " ms", null);
      Arrays.setAll(results, i -> results[i] != null ? results[i]
          : Objects.requireNonNullElse(b.results.get(i), unconfirmed));
      // a channel with confirms still outstanding would mix them into the next batch: never reuse it
      return done && !broken;
    }

    void discard() {
      broken = true;
      // always: on a caller's auto-recovering connection a closed channel stays registered for recovery until aborted
      try {
        channel.abort();
      } catch (IOException | RuntimeException ignored) {
        // already closing
      }
    }
  }

  /** The state of one batch on one channel; written by the publishing thread and the connection's I/O thread. */
  private static final class Batch {
    final AtomicReferenceArray<DeliveryResult> results;
    final ConcurrentNavigableMap<Long, Integer> unconfirmed = new ConcurrentSkipListMap<>();
    final Map<Integer, String> returns = new ConcurrentHashMap<>();
    final Map<String, List<Integer>> byMessageId = new ConcurrentHashMap<>();
    final CountDownLatch pending;

    Batch(int size, int pending) {
      this.results = new AtomicReferenceArray<>(size);
      this.pending = new CountDownLatch(pending);
    }

    void expect(String messageId, int index) {
      byMessageId.computeIfAbsent(messageId, k -> new CopyOnWriteArrayList<>()).add(index);
    }

    void complete(int index, DeliveryResult r) {
      if (results.compareAndSet(index, null, r)) {
        pending.countDown();
      }
    }

    void returned(Return r) {
      String id = r.getProperties() == null ? null : r.getProperties().getMessageId();
      List<Integer> indexes = id == null ? null : byMessageId.get(id);
      if (indexes == null) {
        return;
      }
      String reason = "unroutable: RabbitMQ returned the message (" + r.getReplyCode() + ' ' + r.getReplyText()
          + ") from exchange '" + r.getExchange() + "' with routing key '" + r.getRoutingKey()
          + "': no queue is bound for it";
      for (int i : indexes) {
        returns.put(i, reason);
      }
    }

    void confirmed(long tag, boolean multiple, boolean ack) {
      Map<Long, Integer> hit = multiple ? unconfirmed.headMap(tag, true) : unconfirmed.subMap(tag, true, tag, true);
      for (long seq : new ArrayList<>(hit.keySet())) {
        Integer i = unconfirmed.remove(seq);
        if (i != null) {
          String returned = returns.get(i);
          complete(i, !ack ? DeliveryResult.retry("RabbitMQ nacked the message (an internal broker error)", null)
              : returned != null ? DeliveryResult.retry(returned, null) : DeliveryResult.delivered());
        }
      }
    }

    void lost(String reason) {
      for (long seq : new ArrayList<>(unconfirmed.keySet())) {
        Integer i = unconfirmed.remove(seq);
        if (i != null) {
          complete(i, DeliveryResult.retry(reason, null));
        }
      }
    }
  }

  private static AMQP.BasicProperties properties(OutboxMessage m) {
    Map<String, Object> headers = new LinkedHashMap<>(m.headers());
    headers.put("aggregate-type", m.aggregateType());
    headers.put("aggregate-id", m.aggregateId());
    return new AMQP.BasicProperties.Builder()
        .messageId(m.id().toString())
        .type(m.type())
        .contentType(CONTENT_TYPE)
        .contentEncoding("utf-8")
        .deliveryMode(2)
        .timestamp(m.createdAt() == null ? null : Date.from(m.createdAt()))
        .headers(headers)
        .build();
  }

  /** Builds a {@link RabbitMqTransport}. Mutable, not thread-safe. */
  public static final class Builder {
    private final ConnectionFactory factory;
    private final Connection connection;
    private String name = "rabbitmq";
    private String defaultExchange;
    private Duration confirmTimeout = Duration.ofSeconds(15);
    private int maxIdleChannels = 8;

    private Builder(ConnectionFactory factory, Connection connection) {
      this.factory = factory;
      this.connection = connection;
    }

    /** This transport's name, in its connection's name, log lines and errors (default {@code rabbitmq}). */
    public Builder name(String name) {
      if (name == null || name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /**
     * The exchange for destinations that are just {@code rabbitmq}, with the event type as the routing key (default
     * none: such events are dead at once). {@code ""} is RabbitMQ's default exchange.
     */
    public Builder defaultExchange(String exchange) {
      Objects.requireNonNull(exchange, "defaultExchange");
      if (exchange.length() > 127) {
        throw new IllegalArgumentException("defaultExchange must be at most 127 characters, got " + exchange.length());
      }
      this.defaultExchange = exchange;
      return this;
    }

    /**
     * How long a batch may take, waiting for the broker's confirms included (default 15 s); unconfirmed messages are
     * then retried. On a connection the transport opens, the factory copy's connection, handshake and channel RPC
     * timeouts are lowered to it. Keep it well below the relay's lease.
     */
    public Builder confirmTimeout(Duration timeout) {
      if (timeout == null || timeout.compareTo(Duration.ZERO) <= 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException("confirmTimeout must be > 0 and at most 10 min, got " + timeout);
      }
      this.confirmTimeout = timeout;
      return this;
    }

    /** Channels kept open between batches (default 8); more are opened while more threads send at once. */
    public Builder maxIdleChannels(int max) {
      if (max < 0 || max > 256) {
        throw new IllegalArgumentException("maxIdleChannels must be 0 to 256, got " + max);
      }
      this.maxIdleChannels = max;
      return this;
    }

    public RabbitMqTransport build() {
      return new RabbitMqTransport(this);
    }
  }
}
