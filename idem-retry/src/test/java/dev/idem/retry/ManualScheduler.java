package dev.idem.retry;

import java.time.Duration;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A single-threaded scheduler in virtual time: tasks run only inside {@link #runDue()} and {@link #advance}, on the
 * test's thread, with the fake clock set to each task's due time. Nothing waits in real time.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
  private final MutableClock clock;
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
  private long sequence;

  ManualScheduler(MutableClock clock) {
    this.clock = clock;
  }

  /** Runs every task due now (including tasks they schedule for now). */
  void runDue() {
    advance(Duration.ZERO);
  }

  /** Moves time forward by {@code d}, running tasks in due order at their due time. */
  void advance(Duration d) {
    long target = clock.nanos() + d.toNanos();
    for (;;) {
      Task<?> next;
      synchronized (this) {
        next = queue.peek();
        if (next == null || next.at > target) {
          break;
        }
        queue.poll();
      }
      if (next.at > clock.nanos()) {
        clock.setNanos(next.at);
      }
      next.run();
    }
    clock.setNanos(target);
  }

  synchronized int pending() {
    return (int) queue.stream().filter(t -> !t.isCancelled()).count();
  }

  private synchronized <V> Task<V> enqueue(Callable<V> callable, long delayNanos) {
    Task<V> task = new Task<>(callable, clock.nanos() + Math.max(0, delayNanos), sequence++);
    queue.add(task);
    return task;
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return enqueue(Executors.callable(command), unit.toNanos(delay));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    return enqueue(callable, unit.toNanos(delay));
  }

  @Override
  public void execute(Runnable command) {
    enqueue(Executors.callable(command), 0);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void shutdown() {}

  @Override
  public List<Runnable> shutdownNow() {
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    return false;
  }

  @Override
  public boolean isTerminated() {
    return false;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return true;
  }

  private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
    final long at;
    final long seq;

    Task(Callable<V> callable, long at, long seq) {
      super(callable);
      this.at = at;
      this.seq = seq;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(at - clock.nanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      Task<?> other = (Task<?>) o;
      int byTime = Long.compare(at, other.at);
      return byTime != 0 ? byTime : Long.compare(seq, other.seq);
    }
  }
}
