package dev.idem.outbox.consumer;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.memory.InMemoryInboxStore;
import dev.idem.outbox.spi.InboxStore.Fault;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The one-message algorithm the RabbitMQ and NATS consumers share, on an in-memory inbox and a recording broker. */
class MessageProcessorTest {
  private final Inbox inbox = Inbox.builder(new InMemoryInboxStore()).build();
  private final ConsumerEngine engine = ConsumerEngine.builder().maxAttempts(3)
      .backoff(Duration.ZERO, Duration.ZERO).build();
  private final List<String> heard = new ArrayList<>();
  private final List<Action> answers = new ArrayList<>();
  private final MessageProcessor.Broker broker = d -> answers.add(d.action());
  private final ConsumerListener listener = new ConsumerListener() {
    @Override
    public void processed(String consumer, String source, String messageId) {
      heard.add("processed " + messageId);
    }

    @Override
    public void duplicate(String consumer, String source, String messageId) {
      heard.add("duplicate " + messageId);
    }

    @Override
    public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
      heard.add("retried " + messageId + " " + decision.attempts());
    }

    @Override
    public void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {
      heard.add("paused " + messageId);
    }

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      heard.add("deadLettered " + messageId + " " + decision.attempts());
    }

    @Override
    public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
      heard.add("rejected " + messageId + " " + reason + ": " + detail);
      throw new IllegalStateException("a listener that throws changes nothing");
    }
  };

  private MessageProcessor processor(boolean remember, AtomicInteger runs, boolean fail) {
    return new MessageProcessor(inbox, "billing", (tx, event) -> {
      runs.incrementAndGet();
      if (fail) {
        throw new IllegalStateException("boom");
      }
      return "ok";
    }, engine, listener, "message-id", remember);
  }

  private void process(MessageProcessor p, String id, long brokerFailures) {
    p.process("q", id, () -> new InboxEvent(id, "test:q", "{}".getBytes(UTF_8)), brokerFailures, broker);
  }

  @Test
  void processesOnceAndAcknowledgesTheDuplicate() {
    AtomicInteger runs = new AtomicInteger();
    MessageProcessor p = processor(true, runs, false);
    process(p, "e-1", 0);
    process(p, "e-1", 0);
    assertThat(runs).hasValue(1);
    assertThat(answers).containsExactly(Action.ACK, Action.ACK);
    assertThat(heard).containsExactly("processed e-1", "duplicate e-1");
  }

  @Test
  void refusesAMessageWithoutIdOrWhoseFallbackThrows() {
    MessageProcessor p = processor(true, new AtomicInteger(), false);
    assertThat(p.messageId("q", "e-1", () -> "never", " at 1", broker)).isEqualTo("e-1");
    assertThat(p.messageId("q", "", () -> "e-2", " at 2", broker)).isEqualTo("e-2");
    assertThat(p.messageId("q", null, () -> null, " at 3", broker)).isNull();
    assertThat(p.messageId("q", null, () -> {
      throw new IllegalArgumentException("bad header");
    }, " at 4", broker)).isNull();
    assertThat(answers).containsExactly(Action.REJECT, Action.REJECT);
    assertThat(heard.get(0)).isEqualTo("rejected null MISSING_ID: message without message-id at 3");
    assertThat(heard.get(1)).startsWith("rejected null MISSING_ID: messageIdFallback threw on a message at 4: ")
        .contains("bad header");
  }

  @Test
  void countsFailuresInMemoryAndGivesUpAtMaxAttempts() {
    MessageProcessor p = processor(true, new AtomicInteger(), true);
    for (int i = 0; i < 3; i++) {
      process(p, "e-1", 0);
    }
    assertThat(answers).containsExactly(Action.RETRY, Action.RETRY, Action.DEAD_LETTER);
    assertThat(heard).containsExactly("retried e-1 1", "retried e-1 2", "deadLettered e-1 3");
  }

  @Test
  void withoutMemoryTheBrokersCountDecides() {
    MessageProcessor p = processor(false, new AtomicInteger(), true);
    process(p, "e-1", 0);
    process(p, "e-1", 0);
    process(p, "e-1", 2);
    assertThat(heard).containsExactly("retried e-1 1", "retried e-1 1", "deadLettered e-1 3");
  }

  @Test
  void anIdTheInboxCannotHoldIsRejected() {
    MessageProcessor p = processor(true, new AtomicInteger(), false);
    process(p, "x".repeat(300), 0);
    assertThat(answers).containsExactly(Action.REJECT);
    assertThat(heard.get(0)).contains("INVALID_ID: message-id refused by the inbox: ");
  }

  @Test
  void aBrokerThatHoldsTheMessageHasItProcessedAgainInPlace() {
    Inbox down = Inbox.builder(ConsumerEngineTest.judging(Fault.OUTAGE)).build();
    AtomicInteger runs = new AtomicInteger();
    MessageProcessor p = new MessageProcessor(down, "billing", (tx, event) -> {
      if (runs.incrementAndGet() < 3) {
        throw new IllegalStateException("the database is away");
      }
      return "ok";
    }, engine, listener, "Nats-Msg-Id", false);
    List<Decision> held = new ArrayList<>();
    p.process("q", "e-1", () -> new InboxEvent("e-1", "test:q", new byte[0]), 2, new MessageProcessor.Broker() {
      @Override
      public boolean answer(Decision decision) {
        return answers.add(decision.action());
      }

      @Override
      public boolean hold(Decision decision, Throwable error) {
        return held.add(decision);
      }
    });
    assertThat(held).extracting(Decision::action).containsExactly(Action.PAUSE, Action.PAUSE);
    assertThat(held).allMatch(d -> !d.counted());
    assertThat(answers).containsExactly(Action.ACK);
    assertThat(heard).containsExactly("paused e-1", "paused e-1", "processed e-1");
  }

  @Test
  void aRefusalTheBrokerDidNotTakeIsNotReportedAsRejected() {
    MessageProcessor p = processor(true, new AtomicInteger(), false);
    MessageProcessor.Broker notTaken = d -> {
      answers.add(d.action());
      return false; // e.g. its dead letter was not confirmed, and the message was requeued
    };

    assertThat(p.messageId("q", null, () -> null, " at 3", notTaken)).isNull();

    assertThat(answers).containsExactly(Action.REJECT);
    assertThat(heard).isEmpty();
  }

  @Test
  void failureLinesAreKeptOnlyForABrokerThatWritesItsDeadLetters() {
    for (boolean keepLines : new boolean[] {false, true}) {
      List<List<String>> given = new ArrayList<>();
      MessageProcessor.Broker writes = new MessageProcessor.Broker() {
        @Override
        public boolean answer(Decision d) {
          return true;
        }

        @Override
        public boolean deadLetter(Decision d, List<String> history, Throwable error) {
          given.add(history);
          return true;
        }
      };
      MessageProcessor p = new MessageProcessor(inbox, "billing", (tx, event) -> {
        throw new IllegalStateException("boom");
      }, engine, listener, "message-id", true, keepLines);
      String id = "lines-" + keepLines;
      for (int i = 0; i < 3; i++) {
        p.process("q", id, () -> new InboxEvent(id, "test:q", "{}".getBytes(UTF_8)), 0, writes);
      }

      assertThat(given).as("dead letters, keepLines=" + keepLines).hasSize(1);
      assertThat(given.get(0)).as("failure lines, keepLines=" + keepLines).hasSize(keepLines ? 3 : 0);
      if (keepLines) {
        assertThat(given.get(0)).allSatisfy(line -> assertThat(line).contains("IllegalStateException: boom"));
      }
    }
  }

  @Test
  void aBrokerThatCountsItsDeliveriesGetsTheFailureLinesOfItsDeadLettersToo() {
    List<List<String>> given = new ArrayList<>();
    MessageProcessor.Broker writes = new MessageProcessor.Broker() {
      @Override
      public boolean answer(Decision d) {
        return true;
      }

      @Override
      public boolean deadLetter(Decision d, List<String> history, Throwable error) {
        given.add(history);
        return true;
      }
    };
    // NATS: JetStream counts the deliveries (nothing counted in memory), the consumer writes its dead letters
    MessageProcessor p = new MessageProcessor(inbox, "billing", (tx, event) -> {
      throw new IllegalStateException("boom");
    }, engine, listener, "Nats-Msg-Id", false, true);
    for (int i = 0; i < 3; i++) {
      p.process("s", "counted", () -> new InboxEvent("counted", "test:s", "{}".getBytes(UTF_8)), i, writes);
    }

    assertThat(given).hasSize(1);
    assertThat(given.get(0)).hasSize(3).allSatisfy(line -> assertThat(line).contains("IllegalStateException: boom"));
  }

  @Test
  void optionsNameTheirRange() {
    assertThat(ConsumerOptions.between("channels", 64, 1, 64)).isEqualTo(64);
    assertThatThrownBy(() -> ConsumerOptions.between("channels", 0, 1, 64))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("channels must be 1 to 64, got 0");
    assertThatThrownBy(() -> ConsumerOptions.between("ackWait", Duration.ofMillis(999), Duration.ofSeconds(1),
        Duration.ofHours(12))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ackWait must be 1 s to 12 h, got PT0.999S");
    assertThatThrownBy(() -> ConsumerOptions.between("fetchWait", null, Duration.ofMillis(10), Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("fetchWait must be 10 ms to 1 min, got null");
    assertThatThrownBy(() -> ConsumerOptions.between("shutdownTimeout", Duration.ofMinutes(11), Duration.ZERO,
        Duration.ofMinutes(10))).hasMessage("shutdownTimeout must be 0 to 10 min, got PT11M");
    assertThat(ConsumerOptions.name("queue", "orders", 240)).isEqualTo("orders");
    assertThatThrownBy(() -> ConsumerOptions.name("queue", "a\nb", 240))
        .hasMessage("queue must be 1 to 240 characters without control characters, got 'a\nb'");
  }
}
