package dev.idem.outbox.consumer;

import static dev.idem.outbox.consumer.ConsumerListener.safely;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.OutboxTransport;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Processes one broker message at a time through the {@link Inbox} in its own transaction, asks {@link
 * ConsumerEngine} what to do after a failure, has the {@link Broker} carry the decision out and tells the {@link
 * ConsumerListener}: the part the RabbitMQ and NATS consumers share, each supplying its broker's answers. It counts
 * the database outages in a row (on any thread) and, for brokers that do not count deliveries, the failures of up to
 * 10,000 message ids in memory (the least recently failed forgotten first); when the broker writes its dead letters
 * itself, a line per failure ({@link DeadLetterHeaders#attempt}) as well, for the {@value #MAX_WITH_LINES} most
 * recently failed ids (at most {@value DeadLetterHeaders#MAX_HISTORY} lines each), handed to {@link
 * Broker#deadLetter}. Thread-safe. For each message: {@link #messageId}, then {@link #process} unless it was refused.
 */
public final class MessageProcessor {
  private static final int MAX_REMEMBERED = 10_000;
  /** The ids whose failure lines are kept: beyond, the least recently failed lose theirs (their count stays). */
  static final int MAX_WITH_LINES = 1_000;

  private final Inbox inbox;
  private final String consumer;
  private final InboxHandler handler;
  private final ConsumerEngine engine;
  private final ConsumerListener listener;
  private final String idName;
  private final boolean remember;
  private final boolean keepLines;
  private final AtomicInteger outages = new AtomicInteger();
  private final Map<String, History> failures = lru(MAX_REMEMBERED);
  private final Map<String, List<String>> lines = lru(MAX_WITH_LINES);

  /**
   * A processor for one consumer.
   *
   * @param consumer the inbox's consumer name
   * @param idName what the message id is called on the broker ({@code message-id}, {@code Nats-Msg-Id}), for details
   *     given to {@link ConsumerListener#rejected}
   * @param remember whether to count each message's failures in memory, for a broker that does not count its
   *     deliveries itself (or not always); only then are the failure lines kept for {@link Broker#deadLetter}
   */
  public MessageProcessor(Inbox inbox, String consumer, InboxHandler handler, ConsumerEngine engine,
      ConsumerListener listener, String idName, boolean remember) {
    this(inbox, consumer, handler, engine, listener, idName, remember, remember);
  }

  /**
   * A processor for one consumer.
   *
   * @param consumer the inbox's consumer name
   * @param idName what the message id is called on the broker ({@code message-id}, {@code Nats-Msg-Id}), for details
   *     given to {@link ConsumerListener#rejected}
   * @param remember whether to count each message's failures in memory, for a broker that does not count its
   *     deliveries itself (or not always)
   * @param keepLines whether to keep a line per failure for {@link Broker#deadLetter} as well: only for a broker that
   *     writes its dead letters itself; without {@code remember} (a broker that counts its deliveries, NATS), the lines
   *     are kept all the same, and the failures are counted by the broker alone
   */
  public MessageProcessor(Inbox inbox, String consumer, InboxHandler handler, ConsumerEngine engine,
      ConsumerListener listener, String idName, boolean remember, boolean keepLines) {
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.consumer = Objects.requireNonNull(consumer, "consumer");
    this.handler = Objects.requireNonNull(handler, "handler");
    this.engine = Objects.requireNonNull(engine, "engine");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.idName = Objects.requireNonNull(idName, "idName");
    this.remember = remember;
    this.keepLines = keepLines;
  }

  /**
   * A thread-safe map of at most {@code max} message ids, the least recently used forgotten first: what a consumer
   * remembers of its messages between deliveries.
   */
  public static <V> Map<String, V> lru(int max) {
    return Collections.synchronizedMap(new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
        return size() > max;
      }
    });
  }

  /** The broker's side of one message. */
  public interface Broker {
    /**
     * Answers the broker as {@link Decision#action()} says: acknowledges, hands the message back after {@link
     * Decision#after()} ({@code RETRY}, {@code PAUSE}), refuses it or gives up on it.
     *
     * @return whether the broker took the answer; false when it failed (reported to
     *     {@link ConsumerListener#answerFailed} by the broker's consumer)
     */
    boolean answer(Decision decision);

    /**
     * A {@code PAUSE}, or a {@code RETRY} not counted against the message: by default {@link #answer answered}. A
     * broker that would count the redelivery (NATS; RabbitMQ, whose quorum queues count a requeue) keeps the message
     * in hand instead, waits {@link Decision#after()} and returns true to have it processed again at once; or, when
     * closing, hands it back (or leaves it to its channel's close) and returns false.
     *
     * @param error what the inbox threw, for a log
     */
    default boolean hold(Decision decision, Throwable error) {
      answer(decision);
      return false;
    }

    /**
     * Gives up on the message ({@code DEAD_LETTER}): by default {@link #answer answered}. A broker that writes its
     * dead letters itself sends {@code history} with them ({@link DeadLetterHeaders}).
     *
     * @param history one line per counted failure, oldest first (this one included); empty unless the processor
     *     keeps failure lines
     * @param error what the last failure threw
     * @return whether the message was given up on; false when it was handed back instead (the broker reported why),
     *     and then {@link ConsumerListener#deadLettered} is not called
     */
    default boolean deadLetter(Decision decision, List<String> history, Throwable error) {
      return answer(decision);
    }
  }

  /**
   * The message's id: {@code id}, or when it has none the fallback's. A message without one, or whose fallback threw,
   * is refused ({@link Reason#MISSING_ID}: answered {@code REJECT} and reported to {@link ConsumerListener#rejected}).
   *
   * @param where the source given to the listener
   * @param at where the message is, for the listener's detail (e.g. {@code " on subject 'orders'"})
   * @return the id, or null when the message was refused
   */
  public String messageId(String where, String id, Supplier<String> fallback, String at, Broker broker) {
    if (id == null || id.isEmpty()) {
      try {
        id = fallback.get();
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        // the fallback reads the message only: it would throw again on every redelivery
        refuse(where, null, engine.refused(Reason.MISSING_ID), "messageIdFallback threw on a message" + at + ": "
            + OutboxTransport.describe(e), broker);
        return null;
      }
    }
    if (id == null || id.isEmpty()) {
      refuse(where, null, engine.refused(Reason.MISSING_ID), "message without " + idName + at, broker);
      return null;
    }
    return id;
  }

  /**
   * Processes message {@code id} through the inbox, and has {@code broker} carry out what comes of it: {@code ACK}
   * after the commit (then {@link ConsumerListener#processed} or {@link ConsumerListener#duplicate}); after a failure,
   * the {@link ConsumerEngine}'s decision. A {@link VirtualMachineError} is rethrown unanswered.
   *
   * @param where the source given to the listener
   * @param event the message's event: an id it refuses ({@link IllegalArgumentException}) is {@code INVALID_ID}
   * @param brokerFailures the message's failures the broker counted before this delivery (its deliveries before this
   *     one), or 0
   */
  public void process(String where, String id, Supplier<InboxEvent> event, long brokerFailures, Broker broker) {
    process(where, id, event, brokerFailures, false, broker);
  }

  /**
   * As {@link #process(String, String, Supplier, long, Broker)}, with the consumer's word that the broker has not
   * delivered the message before (RabbitMQ's redelivered flag is clear, JetStream counts one delivery). Its first try
   * then takes the inbox's first-delivery order ({@link Inbox#processBatchAndCommit(String, List, InboxHandler,
   * boolean)}), unless the broker counted a failure of it ({@code brokerFailures} above 0) or this processor remembers
   * one; a try after a failure records first.
   */
  public void process(String where, String id, Supplier<InboxEvent> event, long brokerFailures,
      boolean firstDelivery, Broker broker) {
    int contentions = 0;
    boolean first = firstDelivery && brokerFailures == 0 && !failures.containsKey(id);
    while (true) {
      InboxResult result;
      try {
        result = inbox.processBatchAndCommit(consumer, List.of(event.get()), handler, first).get(0);
      } catch (OutOfMemoryError | InternalError | UnknownError e) {
        throw e; // nothing here can be trusted to go on; a StackOverflowError is the message's failure, as on Kafka
      } catch (Throwable e) {
        first = false;
        History before = history(failures.getOrDefault(id, History.NONE), brokerFailures, contentions);
        Decision d = engine.failed(e, before, inbox.store());
        if (!failed(where, id, before, d, e, broker)) {
          return;
        }
        contentions = before.next(d).contentions();
        continue;
      }
      outages.set(0);
      forget(id);
      boolean duplicate = result.duplicate();
      safely(() -> listener.committed(consumer, where, -1, 1, duplicate ? 1 : 0));
      if (broker.answer(engine.processed(result))) {
        if (duplicate) {
          safely(() -> listener.duplicate(consumer, where, id));
        } else {
          safely(() -> listener.processed(consumer, where, id));
        }
      }
      return;
    }
  }

  /** Carries out decision {@code d} on a failure; returns whether to process the message again at once. */
  private boolean failed(String where, String id, History before, Decision d, Throwable e, Broker broker) {
    if (d.action() == Action.PAUSE) {
      // the database is away: every message would fail alike, so this is no mark against the message
      outages.incrementAndGet();
      safely(() -> listener.paused(consumer, where, id, d, e));
      return broker.hold(d, e);
    }
    outages.set(0);
    List<String> history = keepLines ? lines.getOrDefault(id, List.of()) : List.of();
    if (d.counted() && keepLines) {
      Throwable cause = e instanceof InboxHandlerException && e.getCause() != null ? e.getCause() : e;
      history = DeadLetterHeaders.append(history, DeadLetterHeaders.attempt(Instant.now(), cause));
    }
    switch (d.action()) {
      case RETRY:
        if (remember) {
          failures.put(id, before.next(d).withOutages(0));
        }
        if (keepLines) {
          lines.put(id, history);
        }
        safely(() -> listener.retried(consumer, where, id, d, e));
        if (!d.counted()) {
          return broker.hold(d, e);
        }
        broker.answer(d);
        return false;
      case DEAD_LETTER:
        forget(id);
        if (broker.deadLetter(d, history, e)) {
          safely(() -> listener.deadLettered(consumer, where, id, d, e));
        }
        return false;
      default:
        // the inbox refused the id itself (too long, control characters): no redelivery will change that
        refuse(where, id, d, idName + " refused by the inbox: " + e.getMessage(), broker);
        return false;
    }
  }

  /** Refuses the message; reported to the listener once the broker took it (a republished refusal: confirmed). */
  private void refuse(String where, String id, Decision d, String detail, Broker broker) {
    if (broker.answer(d)) {
      safely(() -> listener.rejected(consumer, where, id, d.reason(), detail));
    }
  }

  private void forget(String id) {
    failures.remove(id);
    lines.remove(id);
  }

  /**
   * What came before this failure: the failures counted in memory or by the broker, whichever is higher; the passing
   * conflicts in memory or while held; the outages in a row.
   */
  private History history(History known, long brokerFailures, int contentions) {
    long counted = Math.max(known.failures(), brokerFailures);
    return new History((int) Math.min(Integer.MAX_VALUE, counted), Math.max(known.contentions(), contentions),
        outages.get());
  }
}
