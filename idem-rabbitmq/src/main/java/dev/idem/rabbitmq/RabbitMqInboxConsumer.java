package dev.idem.rabbitmq;

import static dev.idem.outbox.consumer.ConsumerListener.safely;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.Recoverable;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.ConsumerEngine;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.ConsumerOptions;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.MessageProcessor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Consumes a RabbitMQ queue exactly once per message id: each message is processed through the {@link Inbox} in its
 * own transaction ({@link Inbox#processBatchAndCommit}, keyed by the message's {@code message-id}, the outbox event
 * id), and acknowledged only after that transaction has committed. A crash between the commit and the ack leads to a
 * redelivery, which the inbox recognises as a duplicate and which is then acknowledged without running the
 * {@link InboxHandler} again. The handler's event carries the message: {@code event.message(Delivery.class)}.
 *
 * <p>What to do with a message is {@link ConsumerEngine}'s decision (see its table), the same for every broker; this
 * class carries it out on RabbitMQ and reports it to the {@link ConsumerListener}, through {@link MessageProcessor}:
 *
 * <ul>
 *   <li>{@code ACK} (processed and committed, or a duplicate): {@code basic.ack}.</li>
 *   <li>{@code RETRY} (the handler failed, by an exception or an {@link Error}, or its writes failed at the commit):
 *       {@code basic.nack} with requeue, after a pause: {@link Builder#failurePause} after its first failure, doubled
 *       after each next one up to {@link Builder#maxFailurePause}.</li>
 *   <li>{@code PAUSE} (the database is away) and a {@code RETRY} not counted (a passing conflict): no answer; the
 *       message is held, unacknowledged, and tried again after a pause growing likewise (by the outages, or the
 *       conflicts, in a row), as often as it takes (see Holding a message).</li>
 *   <li>{@code DEAD_LETTER} (the {@link Builder#maxFailures}-th failure of a message id, default 5; a payload
 *       mismatch): with a {@link Builder#deadLetterExchange}, republished there with its attempt history, then
 *       {@code basic.ack}; without one, {@code basic.nack} without requeue, dead-lettered by RabbitMQ when the queue
 *       has a dead-letter exchange (with its {@code x-death} header only), dropped otherwise.</li>
 *   <li>{@code REJECT} (no {@code message-id} and no {@link Builder#messageIdFallback fallback}, a fallback that
 *       threw, an id the inbox cannot hold): republished likewise (no history, {@code idem-dlt-attempts} 0), or
 *       {@code basic.reject} without requeue.</li>
 * </ul>
 *
 * <h2>Dead letters</h2>
 * With {@link Builder#deadLetterExchange}, a message given up on is republished as {@link RabbitMqDeadLetters} says:
 * its body, properties and headers plus {@code idem-dlt-reason}, {@code idem-dlt-consumer}, {@code idem-dlt-queue},
 * {@code idem-dlt-exchange}, {@code idem-dlt-routing-key}, {@code idem-dlt-attempts} and one
 * {@code idem-dlt-attempt-<n>} per failure ({@code <time> <error>}), the same as {@code KafkaInboxConsumer} writes.
 * The original is acknowledged only once RabbitMQ confirmed the copy, and only then reported to
 * {@link ConsumerListener#deadLettered} (or {@link ConsumerListener#rejected}). Built from a {@link ConnectionFactory},
 * the consumer publishes its dead letters on a second connection of its own, opened on the first one and closed by
 * {@link #close()}: RabbitMQ blocks a publishing connection during a memory or disk alarm, which would stall the acks
 * of the consuming one. Built on the caller's connection, it publishes on that. {@link #start()} checks that the
 * exchange exists. The second connection's opening is bounded by {@link Builder#deadLetterTimeout} as well, and holds
 * up only the messages waiting for it. When a copy is not confirmed (the exchange was deleted or routes it nowhere, a
 * nack, a timeout, a channel error, its connection not open within the timeout), the original is requeued after
 * {@link Builder#failurePause} (at least a second) and reported to {@link ConsumerListener#deadLetterFailed}; its
 * redelivery is republished without running the handler again (while the consumer remembers it: at most 10,000 such
 * ids, not across a restart or another instance). After
 * {@link Builder#deadLetterAttempts} failures in a row (at once for a message without an id) it is rejected without
 * requeue instead, to the queue's own dead-letter exchange if it has one, and logged at ERROR. A crash between the
 * confirm and the ack can dead-letter a message twice, with the same {@code message-id}; an ack that fails after the
 * confirm is remembered likewise, and the redelivery only acknowledged.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).build()).build();
 * try (RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(factory, inbox, "shipping", "shipping-orders")
 *     .handler((tx, event) -> {
 *       Delivery delivery = event.message(Delivery.class);
 *       insertShipment(JdbcTransaction.connectionOf(tx), delivery.getBody());
 *       return "shipped";
 *     })
 *     .prefetch(50)
 *     .build()
 *     .start()) {
 *   ...
 * }
 * }</pre>
 *
 * <p>The queue must exist: declare it (durable, with a dead-letter exchange if rejected messages should be kept) before
 * {@link #start}. Each of the {@link Builder#channels} channels delivers one message at a time, on the client's
 * consumer thread pool. Built from a {@link ConnectionFactory}, the consumer owns its connection, and the factory's
 * automatic recovery (on by default) resumes consuming after a connection loss; unacknowledged messages are then
 * redelivered and deduplicated by the inbox. Thread-safe.
 *
 * <p>No message ends consumption: whatever the handler or the fallback throws, {@link Error}s included, is answered
 * as above and reported to the listener, so it never reaches the client's consumer thread (which would close the
 * channel). A {@link StackOverflowError} is a failure of its message; a {@link VirtualMachineError} such as
 * {@link OutOfMemoryError} requeues the message and is rethrown. A
 * channel the broker or the client closes while the connection stays open (e.g. after a channel error), and a
 * subscription RabbitMQ cancels ({@code basic.cancel}: the queue was deleted, or the node of a classic queue went
 * down), are replaced by a new subscription on a new channel, with a pause doubling from 100 ms to 30 s between
 * attempts (a deleted queue refuses them until it is declared again), until {@link #close()}; the cancel and each
 * failed attempt are reported to {@link ConsumerListener#receiveFailed}, and {@link #isRunning()} is false meanwhile.
 * A lost connection is the factory's automatic recovery's business; a connection that will not come back (closed by
 * its owner, or without automatic recovery) ends consumption, reported to {@link ConsumerListener#stopped}. Failures
 * are counted per message id in memory (at most 10,000 ids, the oldest forgotten first), or taken from the
 * {@code x-delivery-count} header quorum queues set, whichever is higher.
 *
 * <h2>Holding a message</h2>
 * A database that is away is no mark against a message, and neither is a passing conflict: a requeue would be one,
 * since a quorum queue counts it as a delivery ({@code x-delivery-count}; with {@code x-delivery-limit}, which
 * RabbitMQ 4 sets to 20 by default, it then dead-letters or drops the message), and this consumer takes that count as
 * the message's failures. So the channel keeps the delivery in hand, unacknowledged, and tries the same message again
 * after a pause doubling from {@link Builder#failurePause} up to {@link Builder#maxFailurePause} until the database
 * answers (the other messages of the channel wait, as they
 * would fail alike). {@link #close()} ends the wait at once (within 50 ms), and closing the channel returns the
 * message to the queue unacknowledged. RabbitMQ's {@code consumer_timeout} (30 minutes by default) bounds the hold:
 * a delivery left unacknowledged longer (the held one, or one prefetched behind it) makes the broker close the
 * channel, which returns them; the consumer opens another channel and they are delivered again. Raise
 * {@code consumer_timeout} above the outages to be waited out in place. A message returned so (a channel closed by
 * the broker, a lost connection, {@link #close()}) may count one more delivery on a quorum queue (RabbitMQ 3.10 counts
 * it); the consumer that held it subtracts those returns from the count when the message comes back to it (while it
 * remembers the id: at most 10,000 ids), but another consumer, or this one after a restart, counts each as a failure,
 * and so does any consumer for the messages prefetched behind it.
 */
public final class RabbitMqInboxConsumer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(RabbitMqInboxConsumer.class.getName());
  /** The least pause before a message whose dead letter failed is requeued: the exchange is not fixed at once. */
  private static final Duration MIN_DEAD_LETTER_PAUSE = Duration.ofSeconds(1);
  private static final int MAX_REMEMBERED = 10_000;
  /** How often a held message's wait looks whether the consumer is closing or its channel closed. */
  private static final Duration HOLD_STEP = Duration.ofMillis(50);
  /** {@link Builder#maxFailurePause} by default, as the NATS and Kafka consumers' longest pause. */
  private static final Duration DEFAULT_MAX_FAILURE_PAUSE = Duration.ofSeconds(30);

  private final ConnectionFactory factory;
  private final String consumer;
  private final String queue;
  private final String source;
  private final int prefetch;
  private final int channelCount;
  private final Function<Delivery, String> messageIdFallback;
  private final ConsumerListener listener;
  private final Duration failurePause;
  private final Duration maxFailurePause;
  private final Duration shutdownTimeout;
  private final MessageProcessor processor;
  private final RabbitMqDeadLetters deadLetters;
  private final int deadLetterAttempts;
  private final boolean firstDeliveryOrder;
  /** Messages given up on whose republication failed: republished again on their redelivery. */
  private final Map<String, GaveUp> unsent = remembered();
  /** Messages whose dead letter was confirmed but whose ack failed: acknowledged on their redelivery. */
  private final Map<String, Boolean> confirmed = remembered();
  /** Held messages a closed channel returned (each a delivery a quorum queue counts), by id: no failures. */
  private final Map<String, Long> returned = remembered();
  /** The connection dead letters are published on (opened on the first one), when the consumer owns its own. */
  private Connection publishing;
  /** Guards {@link #publishing} and {@link #opening}; never held while a connection opens. */
  private final Object publishingLock = new Object();
  /** The opening of the dead letters' connection under way, or null. */
  private CompletableFuture<Connection> opening;
  private final Duration deadLetterTimeout;
  private final Object lock = new Object();
  private final List<Channel> channels = new ArrayList<>();
  private volatile Connection connection;
  private boolean started;
  private volatile boolean closed;
  /** Whether {@link ConsumerListener#stopped} was reported. */
  private final AtomicBoolean stopped = new AtomicBoolean();
  private int inFlight;

  private RabbitMqInboxConsumer(Builder b) {
    this.factory = b.factory;
    this.connection = b.connection;
    this.consumer = b.consumer;
    this.queue = b.queue;
    this.source = "rabbitmq:" + b.queue;
    this.prefetch = b.prefetch;
    this.channelCount = b.channels;
    this.messageIdFallback = b.messageIdFallback;
    this.listener = b.listener;
    this.failurePause = b.failurePause;
    this.maxFailurePause = b.maxFailurePause();
    this.shutdownTimeout = b.shutdownTimeout;
    this.deadLetters = b.deadLetters == null ? null : b.deadLetters.timeout(b.deadLetterTimeout);
    this.deadLetterAttempts = b.deadLetterAttempts;
    this.deadLetterTimeout = b.deadLetterTimeout;
    this.firstDeliveryOrder = b.firstDeliveryOrder;
    // the pause doubles from failurePause with each failure of a message (or outage in a row), as NATS and Kafka do
    ConsumerEngine engine = ConsumerEngine.builder().maxAttempts(b.maxFailures)
        .backoff(failurePause, maxFailurePause).build();
    // a classic queue counts no redelivery: failures are counted in memory as well
    this.processor = new MessageProcessor(b.inbox, consumer, b.handler, engine, listener, "message-id", true,
        deadLetters != null);
  }

  /** A map of at most {@value #MAX_REMEMBERED} ids, the least recently used forgotten first. */
  private static <V> Map<String, V> remembered() {
    return MessageProcessor.lru(MAX_REMEMBERED);
  }

  /**
   * A consumer that opens its own connection from {@code factory} and closes it on {@link #close()}.
   *
   * @param consumer the inbox's consumer name: deduplication is per consumer and event id
   * @param queue the queue to consume; it must exist
   */
  public static Builder builder(ConnectionFactory factory, Inbox inbox, String consumer, String queue) {
    return new Builder(Objects.requireNonNull(factory, "factory"), null, inbox, consumer, queue);
  }

  /** A consumer on the caller's {@code connection}, which it never closes. */
  public static Builder builder(Connection connection, Inbox inbox, String consumer, String queue) {
    return new Builder(null, Objects.requireNonNull(connection, "connection"), inbox, consumer, queue);
  }

  public String consumer() {
    return consumer;
  }

  public String queue() {
    return queue;
  }

  /**
   * Opens the channels and starts consuming. Starts once.
   *
   * @return this consumer
   * @throws IllegalStateException when RabbitMQ is unreachable, the queue does not exist, or the
   *     {@link Builder#deadLetterExchange} does not
   */
  public RabbitMqInboxConsumer start() {
    synchronized (lock) {
      if (started || closed) {
        throw new IllegalStateException("consumer '" + consumer + "' on queue '" + queue + "' was started or closed"
            + " already; build a new one");
      }
      started = true;
      try {
        if (factory != null) {
          connection = factory.newConnection("idem-inbox-" + consumer);
        }
        for (int i = 0; i < channelCount; i++) {
          openChannel();
        }
      } catch (IOException | TimeoutException | RuntimeException e) {
        Throwable cause = e.getCause() != null && e instanceof IOException ? e.getCause() : e;
        closeChannels();
        throw new IllegalStateException("consumer '" + consumer + "' cannot consume queue '" + queue + "': "
            + OutboxTransport.describe(cause) + ". Check that RabbitMQ is reachable and the queue is declared.", e);
      }
      if (deadLetters != null) {
        try {
          deadLetters.checkExchange(connection);
        } catch (IOException e) {
          closeChannels();
          throw new IllegalStateException("consumer '" + consumer + "' on queue '" + queue + "' cannot start: "
              + e.getMessage(), e);
        }
      }
      return this;
    }
  }

  /**
   * Opens one consuming channel and, once it is subscribed, adds it to {@link #channels}; the caller holds the lock.
   * A channel whose subscription failed (e.g. a missing queue: {@code NOT_FOUND}) is closed again.
   */
  private void openChannel() throws IOException {
    Channel channel = connection.createChannel();
    try {
      channel.basicQos(prefetch);
      channel.basicConsume(queue, false, (tag, delivery) -> onDelivery(channel, delivery),
          tag -> resubscribeLater(channel, "RabbitMQ cancelled the subscription of consumer '" + consumer
              + "' to queue '" + queue + "' (the queue was deleted, or the node of a classic queue went down)"));
    } catch (IOException | RuntimeException e) {
      abort(channel);
      throw e;
    }
    channels.add(channel);
    // on the connection's thread, which must not wait for the lock: a reopen may hold it while it waits for a reply
    channel.addShutdownListener(cause -> {
      if (closed) {
        return;
      }
      if (!cause.isHardError()) {
        // a channel-level close (a channel error, or the client's consumer thread giving up on it) while the
        // connection stays: automatic recovery does not cover it, so open a new one
        resubscribeLater(channel, "a channel on queue '" + queue + "' was closed (" + cause.getMessage() + ")");
      } else if (!(connection instanceof Recoverable) || cause.isInitiatedByApplication()) {
        // the connection is gone and no automatic recovery brings it back
        stopped(cause);
      }
    });
  }

  /**
   * Drops {@code dead} (a channel closed, or whose subscription the broker cancelled) and subscribes again on a new
   * channel, on a thread of its own: see {@link #resubscribe}.
   */
  private void resubscribeLater(Channel dead, String why) {
    if (closed) {
      return;
    }
    Thread t = new Thread(() -> resubscribe(dead, why), "idem-rabbitmq-resubscribe-" + consumer);
    t.setDaemon(true);
    t.start();
  }

  /**
   * Replaces {@code dead} by a new subscribed channel, trying again with a pause doubling from 100 ms to 30 s while it
   * fails (a deleted queue answers {@code NOT_FOUND} until it is declared again), each failure reported to {@link
   * ConsumerListener#receiveFailed}, until {@link #close()}. While the connection is down and recovers automatically
   * it waits for it; a connection that will not come back stops the consumer ({@link ConsumerListener#stopped}).
   */
  private void resubscribe(Channel dead, String why) {
    synchronized (lock) {
      if (closed || !channels.remove(dead)) {
        return; // closing, or the channel was dropped on purpose or replaced already
      }
    }
    abort(dead); // a cancelled subscription leaves its channel open: nothing more comes on it
    LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "': " + why + "; subscribing again");
    safely(() -> listener.receiveFailed(consumer, queue, new IOException(why)));
    long pauseMillis = 100;
    while (true) {
      Exception failure;
      synchronized (lock) {
        if (closed) {
          return;
        }
        Connection c = connection;
        if (c == null) {
          return; // closing
        }
        if (c.isOpen()) {
          try {
            openChannel();
            LOG.log(System.Logger.Level.INFO, "consumer '" + consumer + "' consumes queue '" + queue + "' again");
            return;
          } catch (IOException | RuntimeException e) {
            failure = e;
          }
        } else if (!(c instanceof Recoverable) || c.getCloseReason() != null
            && c.getCloseReason().isInitiatedByApplication()) {
          failure = null;
        } else {
          failure = new IOException("the connection is down; waiting for its automatic recovery");
        }
      }
      if (failure == null) {
        Connection c = connection;
        stopped(c == null || c.getCloseReason() == null ? new IOException("the connection was closed")
            : c.getCloseReason());
        return;
      }
      Exception e = failure;
      Throwable shown = e instanceof IOException && e.getCause() != null ? e.getCause() : e;
      LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' could not subscribe to queue '" + queue
          + "' again; trying again in " + pauseMillis + " ms: " + OutboxTransport.describe(shown));
      safely(() -> listener.receiveFailed(consumer, queue, e));
      if (!waitUnlessClosed(Duration.ofMillis(pauseMillis))) {
        return;
      }
      pauseMillis = Math.min(30_000, pauseMillis * 2);
    }
  }

  /** Waits {@code pause}, looking every {@link #HOLD_STEP} whether the consumer is closing; false when it is. */
  private boolean waitUnlessClosed(Duration pause) {
    long deadline = System.nanoTime() + pause.toNanos();
    while (!closed) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return true;
      }
      LockSupport.parkNanos(Math.min(left, HOLD_STEP.toNanos()));
    }
    return false;
  }

  /** The consumer's connection is gone for good: reported once to {@link ConsumerListener#stopped}, logged. */
  private void stopped(Throwable cause) {
    if (closed || !stopped.compareAndSet(false, true)) {
      return;
    }
    LOG.log(System.Logger.Level.ERROR, "consumer '" + consumer + "' stopped consuming queue '" + queue + "': its"
        + " connection was closed and will not recover (" + OutboxTransport.describe(cause) + "). Restart it.");
    safely(() -> listener.stopped(consumer, cause));
  }

  /**
   * Whether the consumer was started, is not closed, and has at least one open channel subscribed to the queue. A
   * channel closed by an error, or whose subscription RabbitMQ cancelled (the queue deleted, the node of a classic
   * queue down), is replaced by itself, so this may be false for a while: while the queue is missing, while the
   * connection recovers; and for good once the connection is gone without recovery ({@link
   * ConsumerListener#stopped}).
   */
  public boolean isRunning() {
    synchronized (lock) {
      return started && !closed && channels.stream().anyMatch(Channel::isOpen);
    }
  }

  private void onDelivery(Channel channel, Delivery delivery) {
    long tag = delivery.getEnvelope().getDeliveryTag();
    synchronized (lock) {
      if (closed) {
        return; // closing the channel requeues it
      }
      inFlight++;
    }
    try {
      handle(channel, delivery, tag);
    } catch (VirtualMachineError e) {
      answer(channel, tag, null, Action.RETRY);
      throw e;
    } catch (Throwable e) {
      // handle() answers every outcome itself; this last guard keeps anything from reaching the client's consumer
      // thread, which would close the channel
      LOG.log(System.Logger.Level.ERROR, "consumer '" + consumer + "' failed on a message on queue '" + queue + "': "
          + OutboxTransport.describe(e));
      pause(failurePause);
      answer(channel, tag, null, Action.RETRY);
    } finally {
      synchronized (lock) {
        inFlight--;
        lock.notifyAll();
      }
    }
  }

  private void handle(Channel channel, Delivery delivery, long tag) {
    String header = delivery.getProperties() == null ? null : delivery.getProperties().getMessageId();
    String id = processor.messageId(queue, header, () -> messageIdFallback.apply(delivery), " (delivery tag " + tag
        + ")", answers(channel, delivery, null));
    if (id == null) {
      return;
    }
    if (deadLetters != null && confirmed.remove(id) != null) {
      // its dead letter was confirmed, its ack failed: acknowledged now, without running the handler again
      answer(channel, tag, id, Action.ACK);
      return;
    }
    GaveUp known = deadLetters == null ? null : unsent.remove(id);
    if (known != null) {
      // given up on before, but its dead letter was not confirmed: republished without running the handler again
      if (republish(channel, delivery, id, known)) {
        if (known.decision().action() == Action.REJECT) {
          safely(() -> listener.rejected(consumer, queue, id, known.decision().reason(), "message-id refused by the"
              + " inbox; dead-lettered on a redelivery"));
        } else {
          safely(() -> listener.deadLettered(consumer, queue, id, known.decision(), known.error()));
        }
      }
      return;
    }
    boolean firstDelivery = firstDeliveryOrder && delivery.getEnvelope() != null
        && !delivery.getEnvelope().isRedeliver();
    // each return of a held message by a closed channel counted a delivery on a quorum queue, but no failure
    long failures = Math.max(0, deliveryCount(delivery) - returned.getOrDefault(id, 0L));
    processor.process(queue, id, () -> new InboxEvent(id, source, delivery.getBody(), delivery), failures,
        firstDelivery, answers(channel, delivery, id));
  }

  /**
   * Waits {@code after} with a delivery of {@code channel} in hand, looking every {@link #HOLD_STEP} whether the
   * consumer is closing or the channel closed.
   *
   * @return false when the consumer is closing or the channel closed (which returns the delivery to the queue)
   */
  private boolean holdFor(Channel channel, Duration after) {
    long deadline = System.nanoTime() + after.toNanos();
    while (!closed && channel.isOpen()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return true;
      }
      LockSupport.parkNanos(Math.min(left, HOLD_STEP.toNanos()));
    }
    return false;
  }

  /**
   * A message given up on: why, its failure lines, what it threw last (null for a refusal), and how many times its
   * dead letter failed so far.
   */
  private record GaveUp(Decision decision, List<String> history, Throwable error, int unsent) {
    GaveUp(Decision decision, List<String> history, Throwable error) {
      this(decision, history, error, 0);
    }
  }

  /** This consumer's answers to one delivery of message {@code id} (null while it is not known). */
  private MessageProcessor.Broker answers(Channel channel, Delivery delivery, String id) {
    return new MessageProcessor.Broker() {
      /** Whether this delivery's hold was logged at WARNING already: one line per message, not per try. */
      private boolean warned;

      @Override
      public boolean answer(Decision d) {
        if (id != null && !d.triesAgain()) {
          returned.remove(id);
        }
        if (deadLetters != null && d.action() == Action.REJECT) {
          return republish(channel, delivery, id, new GaveUp(d, List.of(), null));
        }
        return RabbitMqInboxConsumer.this.answer(channel, delivery.getEnvelope().getDeliveryTag(), id, d);
      }

      @Override
      public boolean hold(Decision d, Throwable error) {
        // the database is away, or a passing conflict: a requeue would count a delivery against the message on a
        // quorum queue (x-delivery-count, which x-delivery-limit ends, and which this consumer counts as failures),
        // so it stays in hand, unacknowledged, and is tried again here after the pause
        if (d.action() == Action.PAUSE) {
          LOG.log(warned ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING, "consumer '" + consumer
              + "': the database failed (" + OutboxTransport.describe(error) + "); holding message " + id
              + " of queue '" + queue + "', trying it again every " + d.after().toMillis() + " ms");
          warned = true;
        }
        if (holdFor(channel, d.after())) {
          return true;
        }
        // closing, or the channel is gone: closing the channel returns the message to the queue unacknowledged
        if (id != null) {
          returned.merge(id, 1L, Long::sum);
        }
        return false;
      }

      @Override
      public boolean deadLetter(Decision d, List<String> history, Throwable error) {
        if (id != null) {
          returned.remove(id);
        }
        if (deadLetters == null) {
          return answer(d);
        }
        return republish(channel, delivery, id, new GaveUp(d, history, error));
      }
    };
  }

  /**
   * Republishes a message given up on to the dead-letter exchange and acknowledges it once confirmed; requeues it
   * after a pause otherwise, or after {@link Builder#deadLetterAttempts} refusals by the broker in a row (at once for
   * a message without an id) rejects it without requeue; a broker that does not answer or a connection that is down
   * is waited for, requeued, and counts nothing. Returns whether it was dead-lettered (confirmed, or rejected).
   */
  private boolean republish(Channel channel, Delivery delivery, String id, GaveUp gaveUp) {
    long tag = delivery.getEnvelope().getDeliveryTag();
    RabbitMqDeadLetters.Original original = new RabbitMqDeadLetters.Original(delivery.getEnvelope().getExchange(),
        delivery.getEnvelope().getRoutingKey(), delivery.getProperties(), delivery.getBody());
    try {
      deadLetters.publish(publishing(channel), consumer, queue, original, gaveUp.decision(), gaveUp.history());
    } catch (IOException | RuntimeException e) {
      safely(() -> listener.deadLetterFailed(consumer, queue, id, e));
      // only a refusal by the broker counts: one that does not answer in time (a memory or disk alarm blocks
      // publishers) or a connection that is down passes, and the message waits for it, requeued, never rejected
      boolean refused = RabbitMqDeadLetters.isRefusal(e);
      int failed = refused ? gaveUp.unsent() + 1 : gaveUp.unsent();
      if (refused && (id == null || failed >= deadLetterAttempts)) {
        LOG.log(System.Logger.Level.ERROR, "consumer '" + consumer + "' could not dead-letter message " + id
            + " from queue '" + queue + "' to " + deadLetters + " (" + failed + " time(s), last: "
            + OutboxTransport.describe(e) + "); rejecting it without requeue instead, to the queue's own dead-letter"
            + " exchange if it has one");
        return answer(channel, tag, id, gaveUp.decision().action());
      }
      unsent.put(id, new GaveUp(gaveUp.decision(), gaveUp.history(), gaveUp.error(), failed));
      LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' could not dead-letter message " + id
          + " from queue '" + queue + "' to " + deadLetters + " (" + OutboxTransport.describe(e) + "); requeueing it"
          + " to try again");
      pause(failurePause.compareTo(MIN_DEAD_LETTER_PAUSE) < 0 ? MIN_DEAD_LETTER_PAUSE : failurePause);
      answer(channel, tag, id, Action.RETRY);
      return false;
    }
    if (!answer(channel, tag, id, Action.ACK) && id != null) {
      confirmed.put(id, Boolean.TRUE); // the dead letter exists: its redelivery is only acknowledged
    }
    return true;
  }

  /**
   * The connection to publish dead letters on: one of their own when the consumer opened its connection (a
   * connection RabbitMQ blocks for publishing, on a memory or disk alarm, would stall the acks of the consuming
   * one), opened on the first dead letter; else the caller's connection.
   */
  private Connection publishing(Channel channel) throws IOException {
    if (factory == null) {
      return channel.getConnection();
    }
    CompletableFuture<Connection> pending;
    Connection dead = null;
    // a lock of its own: the maps every delivery reads must not wait while a connection opens
    synchronized (publishingLock) {
      Connection c = publishing;
      if (c != null && (c.isOpen() || c instanceof Recoverable)) {
        return c;
      }
      if (opening == null) {
        dead = c;
        publishing = null;
        CompletableFuture<Connection> f = new CompletableFuture<>();
        opening = f;
        Thread t = new Thread(() -> openPublishing(f), "idem-rabbitmq-dead-letters-" + consumer);
        t.setDaemon(true);
        t.start();
      }
      pending = opening;
    }
    if (dead != null) {
      dead.abort(1_000);
    }
    try {
      // bounded by the dead-letter timeout: an unanswering broker holds up this message only, for that long
      return pending.get(deadLetterTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new IOException("could not open the dead letters' connection within the dead-letter timeout ("
          + deadLetterTimeout.toMillis() + " ms); it is still being opened", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IOException("could not open the dead letters' connection: " + OutboxTransport.describe(cause), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while opening the dead letters' connection", e);
    }
  }

  /**
   * Opens the dead letters' connection for {@link #publishing(Channel)}, on a thread of its own: it keeps it, or
   * closes it when the consumer was closed meanwhile, and completes {@code f}.
   */
  private void openPublishing(CompletableFuture<Connection> f) {
    Connection c = null;
    Throwable failure = null;
    try {
      c = factory.newConnection("idem-inbox-" + consumer + "-dead-letters");
    } catch (IOException | TimeoutException | RuntimeException e) {
      failure = e;
    } finally {
      boolean keep;
      synchronized (publishingLock) {
        opening = null;
        keep = c != null && !closed;
        if (keep) {
          publishing = c;
        }
      }
      if (c != null && !keep) {
        c.abort(1_000); // the consumer was closed while it opened
        failure = new IOException("the consumer was closed");
      }
      if (keep) {
        f.complete(c);
      } else {
        f.completeExceptionally(failure != null ? failure : new IOException("the connection could not be opened"));
      }
    }
  }

  /** On a quorum queue, the deliveries returned before this one ({@code x-delivery-count}); 0 elsewhere. */
  private static long deliveryCount(Delivery delivery) {
    Map<String, Object> headers = delivery.getProperties() == null ? null : delivery.getProperties().getHeaders();
    return headers != null && headers.get("x-delivery-count") instanceof Number n ? n.longValue() : 0;
  }

  private void pause(Duration pause) {
    if (!pause.isZero() && !closed) {
      LockSupport.parkNanos(pause.toNanos());
    }
  }

  /** Carries out {@code d}: a message handed back waits {@link Decision#after()} first. */
  private boolean answer(Channel channel, long tag, String id, Decision d) {
    pause(d.after());
    return answer(channel, tag, id, d.action());
  }

  private boolean answer(Channel channel, long tag, String id, Action answer) {
    try {
      switch (answer) {
        case ACK:
          channel.basicAck(tag, false);
          break;
        case RETRY:
        case PAUSE:
          channel.basicNack(tag, false, true);
          break;
        case DEAD_LETTER:
          channel.basicNack(tag, false, false);
          break;
        default:
          channel.basicReject(tag, false);
      }
      return true;
    } catch (IOException | RuntimeException e) {
      // the channel is gone: the broker redelivers the message, and the inbox drops it if it was committed
      LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' could not " + answer + " a message on queue '"
          + queue + "': " + OutboxTransport.describe(e));
      safely(() -> listener.answerFailed(consumer, queue, id, e));
      return false;
    }
  }

  /**
   * Stops consuming: messages delivered from now on are left unprocessed and unacknowledged, messages being
   * processed get up to the shutdown timeout to finish, then the channels close (which ends the subscriptions and
   * puts every unacknowledged message back on the queue) and the connection too if the consumer opened it.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      long deadline = System.nanoTime() + shutdownTimeout.toNanos();
      while (inFlight > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' closes with " + inFlight
              + " message(s) still being processed; they will be redelivered");
          break;
        }
        try {
          lock.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    closeChannels(); // outside the lock: closing may wait on the client's threads, which take it in onDelivery
  }

  private void closeChannels() {
    List<Channel> open;
    synchronized (lock) {
      open = new ArrayList<>(channels);
      channels.clear();
    }
    for (Channel c : open) {
      if (c.isOpen()) {
        try {
          c.close();
        } catch (IOException | TimeoutException | RuntimeException e) {
          abort(c);
        }
      }
    }
    if (factory != null && connection != null) {
      if (connection.isOpen()) {
        try {
          connection.close(5_000);
        } catch (IOException | RuntimeException e) {
          connection.abort(1_000);
        }
      }
      connection = null;
    }
    Connection c;
    synchronized (publishingLock) {
      c = publishing;
      publishing = null; // one still opening is closed when it opens: closed is set
    }
    if (c != null) {
      try {
        c.close(5_000);
      } catch (IOException | RuntimeException e) {
        c.abort(1_000);
      }
    }
  }

  private static void abort(Channel c) {
    try {
      c.abort();
    } catch (IOException | RuntimeException ignored) {
      // closing anyway
    }
  }

  @Override
  public String toString() {
    return "RabbitMqInboxConsumer{" + consumer + " <- " + queue + ", prefetch=" + prefetch + ", channels="
        + channelCount + ", failurePause=" + failurePause.toMillis() + ".." + maxFailurePause.toMillis() + " ms}";
  }

  /** Builds a {@link RabbitMqInboxConsumer}; {@link #handler} is required. Mutable, not thread-safe. */
  public static final class Builder {
    private final ConnectionFactory factory;
    private final Connection connection;
    private final Inbox inbox;
    private final String consumer;
    private final String queue;
    private InboxHandler handler;
    private int prefetch = 32;
    private int channels = 1;
    private Function<Delivery, String> messageIdFallback = d -> null;
    private ConsumerListener listener = new ConsumerListener() {};
    private Duration failurePause = Duration.ofMillis(100);
    /** Null: {@link #DEFAULT_MAX_FAILURE_PAUSE}, or {@link #failurePause} when that is longer. */
    private Duration maxFailurePause;
    private Duration shutdownTimeout = Duration.ofSeconds(10);
    private int maxFailures = 5;
    private RabbitMqDeadLetters deadLetters;
    private Duration deadLetterTimeout = Duration.ofSeconds(10);
    private int deadLetterAttempts = 5;
    private boolean firstDeliveryOrder;

    private Builder(ConnectionFactory factory, Connection connection, Inbox inbox, String consumer, String queue) {
      this.factory = factory;
      this.connection = connection;
      this.inbox = Objects.requireNonNull(inbox, "inbox");
      this.consumer = ConsumerOptions.name("consumer", consumer, 240);
      this.queue = ConsumerOptions.name("queue", queue, 240);
    }

    /**
     * The effect of each message, run in the inbox transaction. Required. The event's id is the message's
     * {@code message-id} (or the {@link #messageIdFallback fallback}'s), its source {@code rabbitmq:<queue>}, its
     * payload the body; {@code event.message(Delivery.class)} is the message itself (properties, headers, envelope).
     * For a JDBC inbox, {@code JdbcTransaction.connectionOf(tx)} is the transaction's connection. What it throws rolls
     * the transaction back; the message is requeued and delivered again.
     */
    public Builder handler(InboxHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /** Unacknowledged messages the broker sends each channel ahead ({@code basic.qos}, default 32). */
    public Builder prefetch(int prefetch) {
      this.prefetch = ConsumerOptions.between("prefetch", prefetch, 1, 65_535);
      return this;
    }

    /** Channels consuming the queue, each processing one message at a time (default 1). */
    public Builder channels(int channels) {
      this.channels = ConsumerOptions.between("channels", channels, 1, 64);
      return this;
    }

    /**
     * The id of a message without {@code message-id}, e.g. from a header of another producer; return null to reject
     * it. By default such messages are rejected without requeue. A fallback that throws rejects the message likewise
     * (reported to {@link ConsumerListener#rejected}); the consumer goes on.
     */
    public Builder messageIdFallback(Function<Delivery, String> fallback) {
      this.messageIdFallback = Objects.requireNonNull(fallback, "messageIdFallback");
      return this;
    }

    /** Hears of what the consumer did with each message; see {@link ConsumerListener}. */
    public Builder listener(ConsumerListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Whether a message RabbitMQ has not delivered before (its redelivered flag clear) runs the handler before the
     * inbox records it (default false: records first, always). On a store that offers it (PostgreSQL), the inbox then
     * writes the record with the commit, in the round trips of the handler's transaction alone, and falls back to
     * recording first when the message id was recorded already, the handler throws or the commit fails ({@link
     * Inbox#processBatchAndCommit(String, java.util.List, InboxHandler, boolean)}). The handler's writes count once
     * either way, but the handler itself may then run for a producer's duplicate (its writes rolled back), and twice
     * for a failure: turn it on when what the handler does outside the transaction tolerates that.
     */
    public Builder firstDeliveryOrder(boolean on) {
      this.firstDeliveryOrder = on;
      return this;
    }

    /**
     * How long a channel waits after a message's first failure before requeueing it (default 100 ms; 1 ms to 1 min),
     * so that a failing handler is not run again at once; the wait doubles after each next failure of the message, up
     * to {@link #maxFailurePause}. The same curve spaces the tries of a message held while the database is away (by
     * the outages in a row) or through a passing conflict (see {@link RabbitMqInboxConsumer}, Holding a message): how
     * often an outage's database is tried.
     */
    public Builder failurePause(Duration pause) {
      this.failurePause = ConsumerOptions.between("failurePause", pause, Duration.ofMillis(1), Duration.ofMinutes(1));
      return this;
    }

    /**
     * The longest wait the {@link #failurePause} doubles up to (default 30 s, or the failure pause when that is
     * longer; 1 ms to 1 h, and not less than the failure pause, checked by {@link #build()}). Equal to the failure
     * pause, every wait is the same.
     */
    public Builder maxFailurePause(Duration max) {
      this.maxFailurePause = ConsumerOptions.between("maxFailurePause", max, Duration.ofMillis(1), Duration.ofHours(1));
      return this;
    }

    private Duration maxFailurePause() {
      if (maxFailurePause != null) {
        return maxFailurePause;
      }
      return failurePause.compareTo(DEFAULT_MAX_FAILURE_PAUSE) > 0 ? failurePause : DEFAULT_MAX_FAILURE_PAUSE;
    }

    /**
     * Failures of one message id after which it is no longer requeued but given up on (republished to the
     * {@link #deadLetterExchange}, or rejected without requeue: dead-lettered when the queue has a dead-letter
     * exchange) and reported to {@link ConsumerListener#deadLettered} (default 5;
     * -1: requeue forever).
     */
    public Builder maxFailures(int maxFailures) {
      if (maxFailures == 0 || maxFailures < -1) {
        throw new IllegalArgumentException("maxFailures must be -1 (never give up) or positive, got " + maxFailures);
      }
      this.maxFailures = maxFailures;
      return this;
    }

    /**
     * Republishes each message given up on to {@code exchange} with routing key {@code routingKey} and Idem's
     * {@code idem-dlt-*} headers (its attempt history), and acknowledges it once RabbitMQ confirmed the copy; see
     * {@link RabbitMqInboxConsumer} (Dead letters). Not set by default: a message given up on is then rejected without
     * requeue, to the queue's own dead-letter exchange if it has one ({@code x-dead-letter-exchange}), which adds
     * only its {@code x-death} header.
     *
     * @param exchange an existing exchange (checked by {@link RabbitMqInboxConsumer#start()}), not blank, at most 255
     *     UTF-8 bytes
     * @param routingKey at most 255 UTF-8 bytes; null for the queue's name
     */
    public Builder deadLetterExchange(String exchange, String routingKey) {
      this.deadLetters = RabbitMqDeadLetters.to(exchange, routingKey);
      return this;
    }

    /**
     * How long a dead letter may wait for RabbitMQ's confirm, and for the dead letters' connection to open (default
     * 10 s; 1 ms to 5 min).
     */
    public Builder deadLetterTimeout(Duration timeout) {
      this.deadLetterTimeout = ConsumerOptions.between("deadLetterTimeout", timeout, Duration.ofMillis(1),
          Duration.ofMinutes(5));
      return this;
    }

    /**
     * Republications of one message's dead letter that may fail in a row (default 5; 1 to 1,000): then, instead of
     * being requeued once more, it is rejected without requeue (to the queue's own dead-letter exchange, if it has
     * one), logged at ERROR, and reported as given up on. A message without an id is rejected so after its first
     * failed republication.
     */
    public Builder deadLetterAttempts(int attempts) {
      this.deadLetterAttempts = ConsumerOptions.between("deadLetterAttempts", attempts, 1, 1_000);
      return this;
    }

    /** How long {@link #close()} waits for messages being processed (default 10 s). */
    public Builder shutdownTimeout(Duration timeout) {
      this.shutdownTimeout = ConsumerOptions.between("shutdownTimeout", timeout, Duration.ZERO,
          Duration.ofMinutes(10));
      return this;
    }

    /** Builds the consumer; {@link RabbitMqInboxConsumer#start()} starts it. */
    public RabbitMqInboxConsumer build() {
      if (handler == null) {
        throw new IllegalStateException("handler is required: what consumer '" + consumer + "' does with a message");
      }
      if (maxFailurePause != null && maxFailurePause.compareTo(failurePause) < 0) {
        throw new IllegalArgumentException("maxFailurePause must not be less than failurePause, got " + maxFailurePause
            + " and " + failurePause);
      }
      return new RabbitMqInboxConsumer(this);
    }
  }
}
