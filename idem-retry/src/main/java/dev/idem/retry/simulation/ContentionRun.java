package dev.idem.retry.simulation;

import dev.idem.retry.Backoff;
import dev.idem.retry.RetryBudget;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;

/**
 * One run of the contention model, in virtual time. Not thread-safe; used once.
 *
 * <p>Implementation note: every client that has not finished yet has exactly one pending event (its read or its write
 * reaches the server, a reply reaches it, or its backoff ends), so the event queue is a binary heap of client indices
 * ordered by (virtual time, scheduling sequence). The sequence breaks ties deterministically, first scheduled first.
 * The server is a single version number; a call takes effect at the server when its request hop ends. Under
 * {@link Model#IDEM} that is also when the client learns the answer; under {@link Model#AWS_2015} the answer takes a
 * reply hop of its own, and the client finishes when the reply to its applied write arrives.
 */
final class ContentionRun {
  private static final long MAX_EVENTS = 2_000_000_000L;

  private static final byte READ_AT_SERVER = 0;
  private static final byte WRITE_AT_SERVER = 1;
  private static final byte BACKOFF_DONE = 2;
  private static final byte READ_REPLY = 3;
  private static final byte WRITE_REPLY = 4;

  private final int clients;
  private final boolean repliesTakeAHop;
  private final Backoff backoff;
  private final RetryBudget budget;
  private final SplittableRandom random;
  private final LongConsumer delayObserver;

  private final long[] time;
  private final long[] sequence;
  private final byte[] event;
  private final int[] versionRead;
  private final int[] retries;
  private final long[] previousDelay;
  private final boolean[] refused;
  private final boolean[] writeApplied;
  private final int[] heap;
  private int heapSize;
  private long nextSequence;
  private int written;

  ContentionRun(Model model, int clients, Backoff backoff, RetryBudget budget, long seed, LongConsumer delayObserver) {
    this.clients = clients;
    this.repliesTakeAHop = model.repliesTakeAHop();
    this.backoff = backoff;
    this.budget = budget;
    this.random = new SplittableRandom(seed);
    this.delayObserver = delayObserver;
    time = new long[clients];
    sequence = new long[clients];
    event = new byte[clients];
    versionRead = new int[clients];
    retries = new int[clients];
    previousDelay = new long[clients];
    refused = new boolean[clients];
    writeApplied = new boolean[clients];
    heap = new int[clients];
  }

  RunOutcome run() {
    long reads = 0;
    long writes = 0;
    long refusedRetries = 0;
    int serverVersion = 0;
    long now = 0;
    for (int c = 0; c < clients; c++) {
      if (budget != null) {
        budget.onRequest();
      }
      reads++;
      schedule(c, hop(), READ_AT_SERVER);
    }
    long events = 0;
    while (heapSize > 0) {
      if (++events > MAX_EVENTS) {
        throw new IllegalStateException("simulation of " + clients + " clients did not finish within " + MAX_EVENTS
            + " events; " + written + " clients had written");
      }
      int c = poll();
      now = time[c];
      switch (event[c]) {
        case READ_AT_SERVER:
          versionRead[c] = serverVersion;
          if (repliesTakeAHop) {
            schedule(c, now + hop(), READ_REPLY);
          } else {
            writes++;
            schedule(c, now + hop(), WRITE_AT_SERVER);
          }
          break;
        case READ_REPLY:
          writes++;
          schedule(c, now + hop(), WRITE_AT_SERVER);
          break;
        case WRITE_AT_SERVER: {
          boolean applied = versionRead[c] == serverVersion;
          if (applied) {
            serverVersion++;
          }
          if (repliesTakeAHop) {
            writeApplied[c] = applied;
            schedule(c, now + hop(), WRITE_REPLY);
          } else {
            answered(c, now, applied);
          }
          break;
        }
        case WRITE_REPLY:
          answered(c, now, writeApplied[c]);
          break;
        case BACKOFF_DONE:
          if (budget != null) {
            if (refused[c]) {
              // The retry layer gave up at the refusal; the client now sends the write again as a new request.
              refused[c] = false;
              budget.onRequest();
            } else if (!budget.tryAcquireRetry()) {
              refused[c] = true;
              refusedRetries++;
              schedule(c, now + nextDelay(c), BACKOFF_DONE);
              break;
            }
          }
          reads++;
          schedule(c, now + hop(), READ_AT_SERVER);
          break;
        default:
          throw new AssertionError(event[c]);
      }
    }
    return new RunOutcome(now, reads, writes, refusedRetries, written);
  }

  /** The client learns whether its write was applied: it has written, or it backs off. */
  private void answered(int c, long now, boolean applied) {
    if (applied) {
      written++;
      if (budget != null) {
        budget.onSuccess();
      }
    } else {
      if (budget != null) {
        budget.onFailure();
      }
      schedule(c, now + nextDelay(c), BACKOFF_DONE);
    }
  }

  private long nextDelay(int c) {
    long delay = backoff.delayNanos(++retries[c], previousDelay[c], random);
    previousDelay[c] = delay;
    if (delayObserver != null) {
      delayObserver.accept(delay);
    }
    return delay;
  }

  /** One network hop: |Normal(10 ms, sd 2 ms)|, by Box-Muller on this run's generator. */
  private long hop() {
    double u1 = 1.0 - random.nextDouble();
    double u2 = random.nextDouble();
    double gaussian = Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2.0 * Math.PI * u2);
    return Math.round(Math.abs(ContentionSimulation.HOP_MEAN_NANOS + ContentionSimulation.HOP_SD_NANOS * gaussian));
  }

  private void schedule(int c, long at, byte kind) {
    time[c] = at;
    sequence[c] = nextSequence++;
    event[c] = kind;
    int i = heapSize++;
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (!before(c, heap[parent])) {
        break;
      }
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = c;
  }

  private int poll() {
    int first = heap[0];
    int last = heap[--heapSize];
    int i = 0;
    while (true) {
      int child = 2 * i + 1;
      if (child >= heapSize) {
        break;
      }
      if (child + 1 < heapSize && before(heap[child + 1], heap[child])) {
        child++;
      }
      if (!before(heap[child], last)) {
        break;
      }
      heap[i] = heap[child];
      i = child;
    }
    if (heapSize > 0) {
      heap[i] = last;
    }
    return first;
  }

  private boolean before(int a, int b) {
    return time[a] < time[b] || (time[a] == time[b] && sequence[a] < sequence[b]);
  }
}
