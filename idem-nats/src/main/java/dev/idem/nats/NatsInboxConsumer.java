package dev.idem.nats;

import static dev.idem.outbox.consumer.ConsumerListener.safely;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.ConsumerEngine;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.ConsumerOptions;
import dev.idem.outbox.consumer.DeadLetterHeaders;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.MessageProcessor;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Consumes a JetStream subject exactly once per message id through a durable pull consumer: each message is processed
 * through the {@link Inbox} in its own transaction ({@link Inbox#processBatchAndCommit}, keyed by its
 * {@code Nats-Msg-Id}, the outbox event id) and acknowledged only after that transaction has committed. A crash
 * between the commit and the ack leads to a redelivery once the ack wait ends; the inbox recognises it as a duplicate,
 * and it is acknowledged without running the {@link InboxHandler} again. The handler's event carries the message:
 * {@code event.message(Message.class)}.
 *
 * <p>What to do with a message is {@link ConsumerEngine}'s decision (see its table), the same for every broker; this
 * class carries it out on JetStream and reports it to the {@link ConsumerListener}, through {@link MessageProcessor}:
 *
 * <ul>
 *   <li>{@code ACK} (processed and committed, or a duplicate): {@code ack}.</li>
 *   <li>{@code RETRY} (the handler failed, by an exception or an {@link Error}, or its writes failed at the commit):
 *       {@code nak} with a delay growing with the delivery count ({@link Builder#nakBackoff}, default 100 ms doubling
 *       up to 30 s).</li>
 *   <li>{@code DEAD_LETTER} (the same on the last delivery {@link Builder#maxDeliver} allows; a payload mismatch) and
 *       {@code REJECT} (no {@code Nats-Msg-Id} and no {@link Builder#messageIdFallback fallback}, a fallback that
 *       threw, an id the inbox cannot hold): with a {@link Builder#deadLetterSubject}, published there with its
 *       attempt history and stored by JetStream, then {@code term}; without one, {@code term} alone (logged at
 *       WARNING: no copy of the message is kept), never delivered again.</li>
 *   <li>{@code PAUSE} (the database is away) and a {@code RETRY} not counted (a passing conflict): no answer; the
 *       message is kept in hand with the rest of its batch (their ack wait restarted with {@code inProgress}) and
 *       tried again after the pause, so that no delivery is counted against it and {@code maxDeliver} never ends it
 *       during an outage.</li>
 * </ul>
 *
 * <h2>Dead letters</h2>
 * With {@link Builder#deadLetterSubject}, a message given up on is first published with {@link JetStream#publish}
 * to that subject, which a stream must capture ({@link #start()} checks that one does), and the consumer waits for
 * the stream's {@code PublishAck} (up to {@link Builder#deadLetterTimeout}): only once the copy is stored is the
 * original {@code term}ed and reported to {@link ConsumerListener#deadLettered} (or {@link ConsumerListener#rejected}).
 * The copy has the original's data and headers (less Idem's {@code idem-dlt-*} headers of an earlier dead-lettering
 * and JetStream's own {@code Nats-*} headers, which would direct the publication: an expected stream or sequence, a
 * rollup, a time to live) plus the {@link DeadLetterHeaders} of this one: {@code idem-dlt-reason},
 * {@code idem-dlt-consumer}, {@code idem-dlt-stream}, {@code idem-dlt-subject} (the subject it was stored under),
 * {@code idem-dlt-stream-sequence}, {@code idem-dlt-message-id} (the original's {@code Nats-Msg-Id}),
 * {@code idem-dlt-attempts} and one {@code idem-dlt-attempt-<n>} per failure this consumer saw ({@code <time>
 * <error>}), the same as {@code KafkaInboxConsumer} and {@code RabbitMqInboxConsumer} write; a header value's line
 * breaks and characters beyond ASCII, which NATS headers cannot hold, become {@code ?}, and the history takes at most
 * a quarter of the server's largest payload (the oldest lines are left out). The copy's own {@code Nats-Msg-Id} is
 * {@code idem-dlt:<consumer>:<stream>:<stream sequence>}, derived from the original stored message, so that a
 * message dead-lettered again (its term failed, or the consumer crashed before it) is dropped by JetStream as a
 * duplicate within the dead-letter stream's duplicate window.
 *
 * <p>When the copy is not stored, the original is not terminated: it is handed back with {@code nak} after the
 * {@link Builder#nakBackoff} of its delivery (at least a second), reported to
 * {@link ConsumerListener#deadLetterFailed}, and given up on again on its redelivery (its handler runs again: it may
 * succeed; the failure lines are kept for the next try while this consumer remembers them, up to 1,000 ids). A
 * refusal by NATS (no stream captures the subject, JetStream's 503 "no responders"; the stream answered with an
 * error, e.g. it is full with {@code DiscardNew}; a copy larger than the server takes) is a setting to fix and logged
 * at ERROR; a publication not
 * acknowledged within the dead-letter timeout or a connection that is down passes, and is logged at WARNING. Unlike
 * RabbitMQ, which after some refusals rejects a message to its queue's own dead-letter exchange, JetStream has no
 * place of its own to put it, so the consumer never terminates a message whose copy was not stored, whatever failed:
 * with an unlimited {@code maxDeliver} it is tried again until the copy is stored; with a finite one, the durable
 * consumer allows {@value #DEAD_LETTER_DELIVERIES} deliveries beyond {@code maxDeliver} for this, after which
 * JetStream delivers it no more (its {@code MAX_DELIVERIES} advisory) but keeps it in the stream.
 *
 * <pre>{@code
 * Connection nats = Nats.connect("nats://127.0.0.1:4222");
 * try (NatsInboxConsumer consumer = NatsInboxConsumer.builder(nats, inbox, "ledger", "PAYMENTS", "payments.>")
 *     .handler((tx, event) -> {
 *       Message message = event.message(Message.class);
 *       book(JdbcTransaction.connectionOf(tx), message.getData());
 *       return "booked";
 *     })
 *     .build()
 *     .start()) {
 *   ...
 * }
 * }</pre>
 *
 * <p>{@link #start()} creates or updates the durable consumer (explicit acks, the configured ack wait, filtered on the
 * subject) on the stream, which must exist, and starts one thread that fetches batches and processes their messages
 * in order. The caller owns the NATS connection; {@link #close()} stops the thread and unsubscribes, leaving the
 * durable consumer on the server so that the next start resumes where this one stopped.
 *
 * <p>No message and no failure ends the thread: whatever a handler or the fallback throws, {@link Error}s included,
 * becomes a {@code nak}, a {@code term} or a pause reported to the listener (a {@link StackOverflowError} is a
 * failure of its message; a {@link VirtualMachineError} such as {@link OutOfMemoryError} is answered with
 * {@code nak}, reported to {@link ConsumerListener#stopped} and then ends the thread, see {@link #isRunning()}). An
 * interrupt flag a handler leaves set is cleared before the next fetch; only {@link #close()} stops the consumer.
 * Before handling a message the consumer tells JetStream it is in progress, which restarts its ack wait, and while
 * the message is being processed it tells JetStream so again every third of the ack wait, for the message and the
 * rest of its batch: an attempt that takes longer than the ack wait (a slow handler, or a connection pool's timeout
 * while the database is away, Hikari's 30 s being the default ack wait too) lets JetStream deliver none of them again,
 * so no delivery is counted against them. A handler that never returns keeps its batch so until {@link #close()}
 * gives up waiting for it; JetStream then delivers the batch again after the ack wait.
 */
public final class NatsInboxConsumer implements AutoCloseable {
  /** The header JetStream deduplicates on; the outbox transport sets it to the event id. */
  public static final String MESSAGE_ID = "Nats-Msg-Id";
  private static final System.Logger LOG = System.getLogger(NatsInboxConsumer.class.getName());
  private static final Pattern DURABLE = Pattern.compile("[A-Za-z0-9_-]{1,200}");
  /**
   * The deliveries the durable consumer allows beyond a finite {@link Builder#maxDeliver} when a dead-letter subject
   * is set: a message whose copy could not be stored on its last allowed delivery is delivered again for another try.
   */
  public static final int DEAD_LETTER_DELIVERIES = 5;
  /** The least delay before a message whose dead letter failed is delivered again: a stream is not created at once. */
  private static final Duration MIN_DEAD_LETTER_DELAY = Duration.ofSeconds(1);
  /** The ids whose failure lines are kept after their dead letter failed, for its next try. */
  private static final int MAX_UNSENT = 1_000;

  private final Connection nats;
  private final String consumer;
  private final String stream;
  private final String subject;
  private final String source;
  private final String durable;
  private final int batchSize;
  private final Duration ackWait;
  private final Duration fetchWait;
  private final long maxDeliver;
  private final Duration shutdownTimeout;
  private final String deadLetterSubject;
  private final Duration deadLetterTimeout;
  private final Duration nakDelay;
  private final Duration nakBackoffInitial;
  private final Duration nakBackoffMax;
  /** The failure lines of the messages whose dead letter failed, by id, for their next try. */
  private final Map<String, List<String>> unsent = MessageProcessor.lru(MAX_UNSENT);
  private final Function<Message, String> messageIdFallback;
  private final ConsumerListener listener;
  private final MessageProcessor processor;
  private final boolean firstDeliveryOrder;
  private final Object lock = new Object();
  /** Keeps the messages in hand in progress while an attempt runs; started by {@link #start()}. */
  private ScheduledExecutorService keepAlive;
  private boolean started;
  private volatile boolean running;
  private JetStreamSubscription subscription;
  /** Where dead letters are published; set by {@link #start()} when there is a dead-letter subject. */
  private volatile JetStream deadLetters;
  private Thread thread;

  private NatsInboxConsumer(Builder b) {
    this.nats = b.nats;
    this.consumer = b.consumer;
    this.stream = b.stream;
    this.subject = b.subject;
    this.source = "nats:" + b.subject;
    this.durable = b.durable != null ? b.durable : b.consumer.replaceAll("[^A-Za-z0-9_-]", "_");
    this.batchSize = b.batchSize;
    this.ackWait = b.ackWait;
    this.fetchWait = b.fetchWait;
    this.maxDeliver = b.maxDeliver;
    this.shutdownTimeout = b.shutdownTimeout;
    this.deadLetterSubject = b.deadLetterSubject;
    this.deadLetterTimeout = b.deadLetterTimeout;
    this.nakDelay = b.nakDelay;
    this.nakBackoffInitial = b.nakBackoffInitial;
    this.nakBackoffMax = b.nakBackoffMax;
    this.messageIdFallback = b.messageIdFallback;
    this.listener = b.listener;
    this.firstDeliveryOrder = b.firstDeliveryOrder;
    ConsumerEngine engine = ConsumerEngine.builder()
        .maxAttempts(b.maxDeliver > 0 ? (int) Math.min(Integer.MAX_VALUE, b.maxDeliver) : ConsumerEngine.UNLIMITED)
        .backoff(b.nakDelay != null ? b.nakDelay : b.nakBackoffInitial, b.nakDelay != null ? b.nakDelay
            : b.nakBackoffMax)
        .build();
    // JetStream counts every delivery: no failure needs counting in memory; the failure lines are kept for the
    // dead letters when the consumer writes them
    this.processor = new MessageProcessor(b.inbox, consumer, b.handler, engine, listener, MESSAGE_ID, false,
        deadLetterSubject != null);
  }

  /**
   * A consumer of {@code subject} on {@code stream}.
   *
   * @param consumer the inbox's consumer name: deduplication is per consumer and event id; also the durable
   *     consumer's name unless {@link Builder#durable} sets one (characters other than letters, digits, {@code _} and
   *     {@code -} become {@code _})
   */
  public static Builder builder(Connection nats, Inbox inbox, String consumer, String stream, String subject) {
    return new Builder(nats, inbox, consumer, stream, subject);
  }

  public String consumer() {
    return consumer;
  }

  /** The durable consumer's name on the stream. */
  public String durable() {
    return durable;
  }

  /** The subject messages given up on are published to, or null when they are terminated without a copy. */
  public String deadLetterSubject() {
    return deadLetterSubject;
  }

  /**
   * Creates or updates the durable consumer and starts the fetching thread. Starts once.
   *
   * @return this consumer
   * @throws IllegalStateException when JetStream is unreachable, the stream does not exist, or no stream captures the
   *     {@link Builder#deadLetterSubject}
   */
  public NatsInboxConsumer start() {
    synchronized (lock) {
      if (started) {
        throw new IllegalStateException("consumer '" + consumer + "' was started already; build a new one");
      }
      started = true;
      ConsumerConfiguration config = ConsumerConfiguration.builder()
          .durable(durable)
          .filterSubject(subject)
          .ackPolicy(AckPolicy.Explicit)
          .ackWait(ackWait)
          .maxDeliver(serverMaxDeliver())
          .build();
      if (deadLetterSubject != null) {
        checkDeadLetterStream();
      }
      try {
        nats.jetStreamManagement().addOrUpdateConsumer(stream, config);
        subscription = nats.jetStream().subscribe(subject, PullSubscribeOptions.bind(stream, durable));
      } catch (IOException | JetStreamApiException | RuntimeException e) {
        throw new IllegalStateException("consumer '" + consumer + "' cannot consume subject '" + subject
            + "' of stream '" + stream + "': " + OutboxTransport.describe(e) + ". Check that NATS is reachable with"
            + " JetStream enabled and that the stream exists and captures the subject.", e);
      }
      running = true;
      ScheduledThreadPoolExecutor beats = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "idem-nats-in-progress-" + consumer);
        t.setDaemon(true);
        return t;
      });
      beats.setRemoveOnCancelPolicy(true); // one beat per attempt, cancelled when it ends: none waits in the queue
      keepAlive = beats;
      thread = new Thread(this::work, "idem-nats-" + consumer);
      thread.setDaemon(true);
      thread.start();
      return this;
    }
  }

  /**
   * The durable consumer's {@code max_deliver}: {@link Builder#maxDeliver}, plus {@link #DEAD_LETTER_DELIVERIES} when
   * it is finite and dead letters are published, so that a message whose copy failed on its last allowed delivery is
   * delivered again for another try.
   */
  private long serverMaxDeliver() {
    if (deadLetterSubject == null || maxDeliver <= 0 || maxDeliver > Long.MAX_VALUE - DEAD_LETTER_DELIVERIES) {
      return maxDeliver;
    }
    return maxDeliver + DEAD_LETTER_DELIVERIES;
  }

  /** Checks that a stream captures the dead-letter subject and sets {@link #deadLetters}. */
  private void checkDeadLetterStream() {
    List<String> streams;
    try {
      streams = nats.jetStreamManagement().getStreamNames(deadLetterSubject);
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      throw new IllegalStateException("consumer '" + consumer + "' cannot look up the stream of its dead-letter"
          + " subject '" + deadLetterSubject + "': " + OutboxTransport.describe(e) + ". Check that NATS is reachable"
          + " with JetStream enabled.", e);
    }
    if (streams == null || streams.isEmpty()) {
      throw new IllegalStateException("consumer '" + consumer + "': no stream captures its dead-letter subject '"
          + deadLetterSubject + "', so messages given up on could not be kept. Create a stream for it (e.g. nats"
          + " stream add --subjects '" + deadLetterSubject + "') before starting, or unset the dead-letter subject to"
          + " terminate them without a copy.");
    }
    try {
      deadLetters = nats.jetStream();
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("consumer '" + consumer + "' cannot publish dead letters: "
          + OutboxTransport.describe(e), e);
    }
  }

  /**
   * Whether the consuming thread is alive and not told to stop: false before {@link #start()}, after {@link #close()},
   * and after a {@link VirtualMachineError} ended the thread.
   */
  public boolean isRunning() {
    Thread t = thread;
    return running && t != null && t.isAlive();
  }

  private void work() {
    try {
      loop();
    } catch (VirtualMachineError e) {
      safely(() -> listener.stopped(consumer, e));
      throw e;
    } finally {
      keepAlive.shutdownNow();
    }
  }

  private void loop() {
    long errorPauseMillis = 0;
    while (running) {
      // a handler (or the inbox, restoring it) may leave the interrupt flag set: fetch and parkNanos would then return
      // at once, forever. close() is the stop signal, not the flag.
      Thread.interrupted();
      List<Message> batch;
      try {
        batch = subscription.fetch(batchSize, fetchWait);
        errorPauseMillis = 0;
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        if (!running) {
          break;
        }
        safely(() -> listener.receiveFailed(consumer, subject, e));
        errorPauseMillis = Math.min(5_000, Math.max(100, errorPauseMillis * 2));
        LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' could not fetch from stream '" + stream
            + "'; trying again in " + errorPauseMillis + " ms: " + OutboxTransport.describe(e));
        pause(Duration.ofMillis(errorPauseMillis));
        continue;
      }
      // the batch's messages are in hand from now: the one being processed and those after it are kept in progress
      // every third of the ack wait, however long each takes, so that JetStream delivers none of them again meanwhile
      AtomicInteger next = new AtomicInteger();
      ScheduledFuture<?> beat = batch.isEmpty() ? null : keepInProgress(batch, next);
      try {
        handleAll(batch, next);
      } finally {
        if (beat != null) {
          beat.cancel(false);
        }
      }
    }
  }

  /** Handles the messages of {@code batch} in order, {@code next} naming the one in hand. */
  private void handleAll(List<Message> batch, AtomicInteger next) {
    for (int i = 0; i < batch.size(); i++) {
      next.set(i);
      Message m = batch.get(i);
      if (running) {
        try {
          handle(m, batch.subList(i + 1, batch.size()));
        } catch (VirtualMachineError e) {
          answer(m, Action.RETRY, Duration.ZERO);
          throw e;
        } catch (Throwable e) {
          // handle() answers every outcome itself; this is a last guard so that nothing ends the thread
          LOG.log(System.Logger.Level.ERROR, "consumer '" + consumer + "' failed on a message on '"
              + m.getSubject() + "': " + OutboxTransport.describe(e));
          answer(m, Action.RETRY, Duration.ZERO);
          pause(Duration.ofMillis(100));
        }
        Thread.interrupted();
      } else {
        answer(m, Action.RETRY, Duration.ZERO); // stopping: hand it back at once instead of after the ack wait
      }
    }
  }

  /** Waits {@code pause}, or less when {@link #close()} is called. */
  private void pause(Duration pause) {
    long deadline = System.nanoTime() + pause.toNanos();
    for (int i = 0; i < 1_000 && running; i++) {
      Thread.interrupted();
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      LockSupport.parkNanos(left);
    }
  }

  /** Processes {@code m}; {@code waiting} are the messages of its batch after it, held with it through a pause. */
  private void handle(Message m, List<Message> waiting) {
    inProgress(m); // restarts the ack wait for this message
    String header = m.hasHeaders() ? m.getHeaders().getFirst(MESSAGE_ID) : null;
    String id = processor.messageId(subject, header, () -> messageIdFallback.apply(m), " on subject '"
        + m.getSubject() + "'", answers(m, List.of()));
    if (id == null) {
      return;
    }
    byte[] data = m.getData() == null ? new byte[0] : m.getData();
    process(m, id, data, waiting);
  }

  /**
   * Tells JetStream every third of the ack wait that the messages of {@code batch} from {@code next} on (the one in
   * hand and those after it) are in progress, till cancelled. An attempt may block longer than the ack wait (a pool's
   * connection timeout while the database is away), and a batch's messages together may take longer than it.
   */
  private ScheduledFuture<?> keepInProgress(List<Message> batch, AtomicInteger next) {
    long period = Math.max(1, ackWait.toNanos() / 3);
    try {
      return keepAlive.scheduleAtFixedRate(() -> {
        for (int j = next.get(); j < batch.size(); j++) {
          inProgress(batch.get(j));
        }
      }, period, period, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return null; // close() gave up waiting for this thread: the messages are left to the ack wait
    }
  }

  private void process(Message m, String id, byte[] data, List<Message> waiting) {
    // JetStream counts every delivery, so this message's failures are its deliveries before this one
    processor.process(subject, id, () -> new InboxEvent(id, source, data, m), deliveredCount(m) - 1,
        firstDeliveryOrder && deliveredOnce(m), answers(m, waiting));
  }

  /** This consumer's answers to message {@code m}; {@code waiting} are the messages of its batch held with it. */
  private MessageProcessor.Broker answers(Message m, List<Message> waiting) {
    return new MessageProcessor.Broker() {
      @Override
      public boolean answer(Decision d) {
        if (deadLetterSubject != null && d.action() == Action.REJECT) {
          return NatsInboxConsumer.this.deadLetter(m, d, List.of());
        }
        return NatsInboxConsumer.this.answer(m, d.action(), d.after());
      }

      @Override
      public boolean hold(Decision d, Throwable error) {
        // the database is away, or a passing conflict: a nak would count a delivery against the message (and
        // end it at maxDeliver), so it is held, with the rest of its batch, and tried again here
        if (d.action() == Action.PAUSE) {
          LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "': the database failed ("
              + OutboxTransport.describe(error) + "); waiting " + d.after().toMillis()
              + " ms, counting no delivery");
        }
        if (holdBatch(m, waiting, d.after())) {
          return true;
        }
        NatsInboxConsumer.this.answer(m, Action.RETRY, Duration.ZERO); // closing: hand it back
        return false;
      }

      @Override
      public boolean deadLetter(Decision d, List<String> history, Throwable error) {
        if (deadLetterSubject == null) {
          return answer(d);
        }
        return NatsInboxConsumer.this.deadLetter(m, d, history);
      }
    };
  }

  /**
   * Publishes {@code m}, given up on, to the dead-letter subject and terminates it once JetStream stored the copy;
   * hands it back with {@code nak} otherwise (see the class notes). Returns whether it was dead-lettered.
   */
  private boolean deadLetter(Message m, Decision d, List<String> history) {
    String id = header(m, MESSAGE_ID);
    List<String> lines = history;
    List<String> before = id == null ? null : unsent.remove(id);
    if (before != null) {
      // the lines of its earlier tries, whose dead letter failed, then this one's
      lines = before;
      for (String line : history) {
        lines = DeadLetterHeaders.append(lines, line);
      }
    }
    try {
      publishDeadLetter(m, d, lines);
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      safely(() -> listener.deadLetterFailed(consumer, subject, id, e));
      if (id != null && !lines.isEmpty()) {
        unsent.put(id, lines);
      }
      boolean refused = isRefusal(e);
      Duration after = deadLetterDelay(deliveredCount(m));
      LOG.log(refused ? System.Logger.Level.ERROR : System.Logger.Level.WARNING, "consumer '" + consumer
          + "' could not dead-letter message " + id + " on '" + m.getSubject() + "' to subject '" + deadLetterSubject
          + "' (" + OutboxTransport.describe(e) + (refused ? "; NATS refused it: check that a stream captures the"
          + " subject and takes the message" : "") + "); not terminating it, it is delivered again in "
          + after.toMillis() + " ms");
      answer(m, Action.RETRY, after);
      return false;
    }
    return answer(m, d.action(), Duration.ZERO);
  }

  /**
   * Publishes the copy of {@code m} to the dead-letter subject and waits for JetStream's {@code PublishAck}.
   *
   * @throws IOException when JetStream did not store it: no responders (no stream captures the subject), a timeout,
   *     the connection down
   * @throws JetStreamApiException when the stream refused it
   */
  private void publishDeadLetter(Message m, Decision d, List<String> history) throws IOException,
      JetStreamApiException {
    JetStream js = deadLetters;
    if (js == null) {
      throw new IOException("the consumer was not started"); // cannot happen: messages come after start()
    }
    Headers headers = new Headers();
    String originalId = null;
    if (m.hasHeaders()) {
      Headers original = m.getHeaders();
      originalId = original.getFirst(MESSAGE_ID);
      for (String name : original.keySet()) {
        List<String> values = original.get(name);
        if (!DeadLetterHeaders.isOwn(name) && !isJetStreams(name) && values != null && !values.isEmpty()) {
          headers.put(name, values);
        }
      }
    }
    Long sequence = streamSequence(m);
    Map<String, String> origin = new LinkedHashMap<>();
    origin.put("stream", stream);
    origin.put("subject", m.getSubject());
    origin.put("stream-sequence", sequence == null ? null : Long.toString(sequence));
    origin.put("message-id", originalId);
    int room = (int) Math.min(Integer.MAX_VALUE, Math.max(4_096, nats.getMaxPayload() / 4));
    DeadLetterHeaders.of(d, consumer, origin, history, room).forEach((name, value) -> headers.put(name,
        headerValue(value)));
    PublishOptions.Builder options = PublishOptions.builder().streamTimeout(deadLetterTimeout);
    String copyId = sequence != null ? "idem-dlt:" + consumer + ':' + stream + ':' + sequence
        : originalId != null ? "idem-dlt:" + consumer + ':' + originalId : null;
    if (copyId != null) {
      options.messageId(headerValue(copyId));
    }
    byte[] data = m.getData() == null ? new byte[0] : m.getData();
    js.publish(NatsMessage.builder().subject(deadLetterSubject).headers(headers).data(data).build(), options.build());
  }

  /**
   * Whether {@code failure}, thrown by a dead letter's publication, is NATS refusing it (no stream captures the
   * subject: JetStream's 503 "no responders"; the stream answered with an error; a message the client or server
   * does not take): a setting to fix, rather than a publication not acknowledged in time or a connection that is
   * down, which pass. Either way the message is delivered again (see the class notes); a refusal is logged at ERROR.
   */
  static boolean isRefusal(Throwable failure) {
    if (failure instanceof JetStreamApiException || failure instanceof IllegalArgumentException) {
      return true;
    }
    // jnats reports a status answer (503 no responders) as "Error Publishing: <code> <text>", a timeout otherwise
    String message = failure == null ? null : failure.getMessage();
    return failure instanceof IOException && message != null && message.startsWith("Error Publishing:");
  }

  /** Whether header {@code name} is one of JetStream's own ({@code Nats-*}), which would direct a publication. */
  private static boolean isJetStreams(String name) {
    return name.regionMatches(true, 0, "Nats-", 0, 5);
  }

  /** {@code value} as a NATS header value can hold it: line breaks and characters beyond ASCII become '?'. */
  private static String headerValue(String value) {
    StringBuilder b = null;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c > 126 || c == '\r' || c == '\n') {
        if (b == null) {
          b = new StringBuilder(value);
        }
        b.setCharAt(i, '?');
      }
    }
    return b == null ? value : b.toString();
  }

  private static String header(Message m, String name) {
    return m.hasHeaders() ? m.getHeaders().getFirst(name) : null;
  }

  /** The message's sequence in its stream, or null when its metadata cannot be read. */
  private static Long streamSequence(Message m) {
    try {
      return m.metaData().streamSequence();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** The delay before a message whose dead letter failed on its {@code delivery}-th delivery is delivered again. */
  private Duration deadLetterDelay(long delivery) {
    Duration delay = nakDelay;
    if (delay == null) {
      long factor = 1L << Math.min(40, Math.max(0, delivery - 1));
      delay = nakBackoffInitial.toMillis() > nakBackoffMax.toMillis() / factor ? nakBackoffMax
          : nakBackoffInitial.multipliedBy(factor);
      if (delay.compareTo(nakBackoffMax) > 0) {
        delay = nakBackoffMax;
      }
    }
    return delay.compareTo(MIN_DEAD_LETTER_DELAY) < 0 ? MIN_DEAD_LETTER_DELAY : delay;
  }

  /**
   * Waits {@code after} with {@code m} and the messages {@code waiting} behind it in hand, telling JetStream they are
   * in progress (which restarts their ack wait) every third of the ack wait.
   *
   * @return false when the consumer is closing
   */
  private boolean holdBatch(Message m, List<Message> waiting, Duration after) {
    long deadline = System.nanoTime() + after.toNanos();
    long step = ackWait.toNanos() / 3;
    while (running) {
      inProgress(m);
      waiting.forEach(this::inProgress);
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return true;
      }
      pause(Duration.ofNanos(Math.min(left, step)));
    }
    return false;
  }

  private void inProgress(Message m) {
    try {
      m.inProgress();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "consumer '" + consumer + "' could not mark a message in progress: "
          + e.getMessage());
    }
  }

  /** Whether JetStream says this is the message's first delivery; no when its metadata cannot be read. */
  private static boolean deliveredOnce(Message m) {
    try {
      return m.metaData().deliveredCount() == 1;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static long deliveredCount(Message m) {
    try {
      return Math.max(1, m.metaData().deliveredCount());
    } catch (RuntimeException e) {
      return 1;
    }
  }

  /**
   * Answers JetStream: {@code ack}, {@code nak} (with {@code delay} unless zero) to retry, or {@code term} for a
   * rejected or dead-lettered message.
   */
  private boolean answer(Message m, Action action, Duration delay) {
    try {
      switch (action) {
        case ACK:
          m.ack();
          break;
        case RETRY:
        case PAUSE:
          if (delay.isZero()) {
            m.nak();
          } else {
            m.nakWithDelay(delay);
          }
          break;
        default:
          m.term();
          if (deadLetterSubject == null) {
            LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' terminated message "
                + header(m, MESSAGE_ID) + " on '" + m.getSubject() + "' (" + action + ") without keeping a copy: set"
                + " a dead-letter subject to keep one");
          }
      }
      return true;
    } catch (RuntimeException e) {
      // the connection is down: JetStream redelivers after the ack wait, and the inbox drops what was committed
      LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' could not " + action + " a message on '"
          + m.getSubject() + "': " + OutboxTransport.describe(e));
      String id = m.hasHeaders() ? m.getHeaders().getFirst(MESSAGE_ID) : null;
      safely(() -> listener.answerFailed(consumer, subject, id, e));
      return false;
    }
  }

  /**
   * Stops the thread (it finishes the message in hand and hands the rest of its batch back with {@code nak}), waiting
   * up to the fetch wait plus the shutdown timeout, then unsubscribes. The durable consumer stays on the server.
   */
  @Override
  public void close() {
    Thread t;
    JetStreamSubscription s;
    synchronized (lock) {
      if (!running) {
        return;
      }
      running = false;
      t = thread;
      s = subscription;
    }
    try {
      t.join(fetchWait.plus(shutdownTimeout).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (t.isAlive()) {
      keepAlive.shutdownNow(); // no longer kept in progress: JetStream redelivers it after the ack wait
      LOG.log(System.Logger.Level.WARNING, "consumer '" + consumer + "' is still processing a message after "
          + shutdownTimeout + "; it will be redelivered if it is not acknowledged");
      return;
    }
    if (nats.getStatus() == Connection.Status.CONNECTED) {
      try {
        s.unsubscribe();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "consumer '" + consumer + "' could not unsubscribe: " + e.getMessage());
      }
    }
  }

  @Override
  public String toString() {
    return "NatsInboxConsumer{" + consumer + " <- " + stream + '/' + subject + ", durable=" + durable + ", batch="
        + batchSize + ", ackWait=" + ackWait + (deadLetterSubject == null ? "" : ", deadLetterSubject="
        + deadLetterSubject) + '}';
  }

  /** Builds a {@link NatsInboxConsumer}; {@link #handler} is required. Mutable, not thread-safe. */
  public static final class Builder {
    private final Connection nats;
    private final Inbox inbox;
    private final String consumer;
    private final String stream;
    private final String subject;
    private String durable;
    private InboxHandler handler;
    private int batchSize = 64;
    private boolean firstDeliveryOrder;
    private Duration ackWait = Duration.ofSeconds(30);
    private Duration fetchWait = Duration.ofMillis(500);
    private long maxDeliver = -1;
    private Duration nakDelay;
    private Duration nakBackoffInitial = Duration.ofMillis(100);
    private Duration nakBackoffMax = Duration.ofSeconds(30);
    private Duration shutdownTimeout = Duration.ofSeconds(10);
    private String deadLetterSubject;
    private Duration deadLetterTimeout = Duration.ofSeconds(10);
    private Function<Message, String> messageIdFallback = m -> null;
    private ConsumerListener listener = new ConsumerListener() {};

    private Builder(Connection nats, Inbox inbox, String consumer, String stream, String subject) {
      this.nats = Objects.requireNonNull(nats, "nats connection");
      this.inbox = Objects.requireNonNull(inbox, "inbox");
      this.consumer = ConsumerOptions.name("consumer", consumer, 240);
      this.stream = ConsumerOptions.name("stream", stream, 240);
      this.subject = ConsumerOptions.name("subject", subject, 240);
      if (subject.indexOf(' ') >= 0) {
        throw new IllegalArgumentException("subject must not contain spaces, got '" + subject + "'");
      }
    }

    /** The durable consumer's name (default: the consumer name, see {@link NatsInboxConsumer#builder}). */
    public Builder durable(String durable) {
      if (durable == null || !DURABLE.matcher(durable).matches()) {
        throw new IllegalArgumentException("durable must be 1 to 200 letters, digits, '_' or '-', got '" + durable
            + "'");
      }
      this.durable = durable;
      return this;
    }

    /**
     * The effect of each message, run in the inbox transaction. Required. The event's id is the message's
     * {@code Nats-Msg-Id} (or the {@link #messageIdFallback fallback}'s), its source {@code nats:<subject>}, its
     * payload the data; {@code event.message(Message.class)} is the JetStream message itself (subject, headers,
     * metadata; do not acknowledge it, the consumer does). For a JDBC inbox, {@code JdbcTransaction.connectionOf(tx)}
     * is the transaction's connection. What it throws rolls the transaction back; the message is negatively
     * acknowledged and delivered again.
     */
    public Builder handler(InboxHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /** Messages fetched at once (default 64). */
    public Builder batchSize(int batchSize) {
      this.batchSize = ConsumerOptions.between("batchSize", batchSize, 1, 10_000);
      return this;
    }

    /** How long JetStream waits for an ack before delivering a message again (default 30 s, at least 1 s). */
    public Builder ackWait(Duration ackWait) {
      this.ackWait = ConsumerOptions.between("ackWait", ackWait, Duration.ofSeconds(1), Duration.ofHours(12));
      return this;
    }

    /** How long one fetch waits when there are no messages (default 500 ms); also bounds how soon close() ends. */
    public Builder fetchWait(Duration fetchWait) {
      this.fetchWait = ConsumerOptions.between("fetchWait", fetchWait, Duration.ofMillis(10), Duration.ofMinutes(1));
      return this;
    }

    /**
     * Deliveries of one message before JetStream gives up on it (default -1: unlimited). When the handler fails on
     * the last allowed delivery the message is dead-lettered (published to the {@link #deadLetterSubject}, if set,
     * then terminated) and reported to {@link ConsumerListener#deadLettered}. A database outage counts no delivery
     * (the message is held and tried again, see the class notes). With a dead-letter subject, the durable consumer
     * allows {@value NatsInboxConsumer#DEAD_LETTER_DELIVERIES} more deliveries, used only when a dead letter failed.
     */
    public Builder maxDeliver(long maxDeliver) {
      if (maxDeliver == 0 || maxDeliver < -1) {
        throw new IllegalArgumentException("maxDeliver must be -1 (unlimited) or positive, got " + maxDeliver);
      }
      this.maxDeliver = maxDeliver;
      return this;
    }

    /**
     * A fixed delay before JetStream redelivers a message whose handler failed, instead of the default growing
     * {@link #nakBackoff}; zero redelivers at once (a redelivery storm while the failure lasts).
     */
    public Builder nakDelay(Duration delay) {
      this.nakDelay = ConsumerOptions.between("nakDelay", delay, Duration.ZERO, Duration.ofHours(1));
      return this;
    }

    /**
     * The delay before JetStream redelivers a message whose handler failed on its n-th delivery:
     * {@code initial * 2^(n-1)}, at most {@code max} (default 100 ms and 30 s). The same curve spaces the tries
     * during a database outage, by the outages in a row.
     */
    public Builder nakBackoff(Duration initial, Duration max) {
      if (initial == null || max == null || initial.compareTo(Duration.ofMillis(1)) < 0 || max.compareTo(initial) < 0
          || max.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("nakBackoff needs 1 ms <= initial <= max <= 1 h, got " + initial + " and "
            + max);
      }
      this.nakBackoffInitial = initial;
      this.nakBackoffMax = max;
      this.nakDelay = null;
      return this;
    }

    /** How long {@link #close()} waits, beyond the fetch wait, for the message in hand (default 10 s). */
    public Builder shutdownTimeout(Duration timeout) {
      this.shutdownTimeout = ConsumerOptions.between("shutdownTimeout", timeout, Duration.ZERO,
          Duration.ofMinutes(10));
      return this;
    }

    /**
     * The id of a message without {@code Nats-Msg-Id}, e.g. from a header of another producer; return null to
     * terminate it. By default such messages are terminated. A fallback that throws terminates the message too (and
     * reports it to {@link ConsumerListener#rejected}); the consumer goes on.
     */
    public Builder messageIdFallback(Function<Message, String> fallback) {
      this.messageIdFallback = Objects.requireNonNull(fallback, "messageIdFallback");
      return this;
    }

    /**
     * The subject a message given up on ({@code DEAD_LETTER}, {@code REJECT}) is published to, with its data, its
     * headers and Idem's {@code idem-dlt-*} headers, before it is terminated; see {@link NatsInboxConsumer} (Dead
     * letters). A stream must capture it: {@link NatsInboxConsumer#start()} fails otherwise. Not set by default: such
     * a message is then terminated without a copy (logged at WARNING).
     *
     * @param subject a subject without wildcards ({@code *}, {@code >}), spaces or empty tokens, at most 240
     *     characters, that the consumer's own subject does not match (it would consume its dead letters)
     * @throws IllegalArgumentException on a bad subject, naming why
     */
    public Builder deadLetterSubject(String subject) {
      this.deadLetterSubject = checkDeadLetterSubject(subject, this.subject);
      return this;
    }

    /** How long a dead letter may wait for JetStream's {@code PublishAck} (default 10 s; 1 ms to 5 min). */
    public Builder deadLetterTimeout(Duration timeout) {
      this.deadLetterTimeout = ConsumerOptions.between("deadLetterTimeout", timeout, Duration.ofMillis(1),
          Duration.ofMinutes(5));
      return this;
    }

    private static String checkDeadLetterSubject(String deadLetter, String filter) {
      if (deadLetter == null || deadLetter.isBlank()) {
        throw new IllegalArgumentException("deadLetterSubject must not be empty, got '" + deadLetter + "'");
      }
      if (deadLetter.length() > 240) {
        throw new IllegalArgumentException("deadLetterSubject must be at most 240 characters, got "
            + deadLetter.length());
      }
      for (int i = 0; i < deadLetter.length(); i++) {
        char c = deadLetter.charAt(i);
        if (c <= ' ' || c > 126) {
          throw new IllegalArgumentException("deadLetterSubject must not contain spaces, control characters or"
              + " characters beyond ASCII, got '" + deadLetter + "'");
        }
      }
      String[] tokens = deadLetter.split("\\.", -1);
      for (String token : tokens) {
        if (token.isEmpty()) {
          throw new IllegalArgumentException("deadLetterSubject must not have an empty token (a leading, trailing or"
              + " double '.'), got '" + deadLetter + "'");
        }
        if (token.indexOf('*') >= 0 || token.indexOf('>') >= 0) {
          throw new IllegalArgumentException("deadLetterSubject must be one subject, without the wildcards '*' and"
              + " '>', got '" + deadLetter + "'");
        }
      }
      if (matches(filter.split("\\.", -1), tokens)) {
        throw new IllegalArgumentException("deadLetterSubject '" + deadLetter + "' is matched by the consumer's own"
            + " subject '" + filter + "': the consumer would consume its own dead letters. Choose a subject that"
            + " it does not match");
      }
      return deadLetter;
    }

    /** Whether NATS subject {@code filter} (with wildcards) matches the literal subject {@code tokens}. */
    private static boolean matches(String[] filter, String[] tokens) {
      for (int i = 0; i < filter.length; i++) {
        if (filter[i].equals(">")) {
          return tokens.length > i;
        }
        if (i >= tokens.length || !(filter[i].equals("*") || filter[i].equals(tokens[i]))) {
          return false;
        }
      }
      return filter.length == tokens.length;
    }

    /** Hears of what the consumer did with each message; see {@link ConsumerListener}. */
    public Builder listener(ConsumerListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Whether a message JetStream delivers for the first time (its delivery count is 1) runs the handler before the
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

    /** Builds the consumer; {@link NatsInboxConsumer#start()} starts it. */
    public NatsInboxConsumer build() {
      if (handler == null) {
        throw new IllegalStateException("handler is required: what consumer '" + consumer + "' does with a message");
      }
      return new NatsInboxConsumer(this);
    }
  }
}
