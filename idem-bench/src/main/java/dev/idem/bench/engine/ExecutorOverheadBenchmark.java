package dev.idem.bench.engine;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.spi.IdempotencyAdmin;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;

import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the executor itself costs per request, with the database taken out: a store that answers from memory and
 * pretends to have transactions. Baseline: calling the work directly. The difference is the engine's CPU per
 * request (validation, fingerprint, record, decision), which the database load harness cannot isolate.
 *
 * <pre>java -jar idem-bench/target/benchmarks.jar ExecutorOverheadBenchmark -prof gc</pre>
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ExecutorOverheadBenchmark {
  private static final byte[] BODY =
      "{\"account_id\":\"acct_42\",\"amount\":1000,\"currency\":\"EUR\",\"description\":\"order 42\"}"
          .getBytes(StandardCharsets.UTF_8);
  private static final StoredResponse RESPONSE = StoredResponse.json(201,
      "{\"id\":\"pay_42\",\"account_id\":\"acct_42\",\"amount\":1000,\"currency\":\"EUR\",\"status\":\"captured\"}");

  private Idem idem;
  private Idem sealed;
  private final AtomicLong counter = new AtomicLong();

  @Setup
  public void setUp() {
    idem = Idem.builder().name("bench").store(new MemoryTransactions()).build();
    idem.atomic(request("replayed"), tx -> RESPONSE);
    sealed = Idem.builder().name("bench-sealed").store(new MemoryTransactions())
        .encryption(Encryption.with(Keyring.generate("bench"))).build();
    sealed.atomic(request("replayed"), tx -> RESPONSE);
  }

  private static IdempotentRequest request(String key) {
    return IdempotentRequest.of(dev.idem.core.Scope.of("tenant-1"), Operation.of("POST /payments"),
        IdempotencyKey.of(key), BODY);
  }

  @Benchmark
  public StoredResponse baselineWorkOnly() {
    String key = "k" + counter.incrementAndGet();
    return key.length() > 0 ? StoredResponse.json(201, "{\"id\":\"pay_42\"}") : RESPONSE;
  }

  @Benchmark
  public Execution firstExecution() {
    return idem.atomic(request("k" + counter.incrementAndGet()), tx -> RESPONSE);
  }

  @Benchmark
  public Execution replay() {
    return idem.atomic(request("replayed"), tx -> RESPONSE);
  }

  /** {@link #firstExecution} with the kept answer sealed (AES-256-GCM, a data key per 100,000 answers). */
  @Benchmark
  public Execution firstExecutionSealed() {
    return sealed.atomic(request("k" + counter.incrementAndGet()), tx -> RESPONSE);
  }

  /** {@link #replay} of a sealed answer: opened on every read (the data key is cached). */
  @Benchmark
  public Execution replaySealed() {
    return sealed.atomic(request("replayed"), tx -> RESPONSE);
  }

  /** A store in memory with pretend transactions: enough for the executor, nothing to measure on its own. */
  static final class MemoryTransactions implements IdempotencyStore {
    private final ConcurrentHashMap<RecordKey, IdempotencyRecord> records = new ConcurrentHashMap<>();
    private static final IdempotencyAdmin NO_ADMIN = new IdempotencyAdmin() {
      @Override
      public List<IdempotencyRecord> list(RecordState state, RecordKey after, int limit) {
        return List.of();
      }

      @Override
      public boolean evict(RecordKey key) {
        return false;
      }
    };
    private static final StoreTransaction TX = new StoreTransaction() {
      @Override
      public <T> T unwrap(Class<T> type) {
        throw new IllegalArgumentException(type.getName());
      }

      @Override
      public void setRollbackOnly() {}

      @Override
      public boolean isRollbackOnly() {
        return false;
      }
    };

    @Override
    public String name() {
      return "memory-tx";
    }

    @Override
    public boolean transactional() {
      return true;
    }

    @Override
    public <R> R inTransaction(TransactionWork<R> work) throws Exception {
      return work.execute(TX);
    }

    @Override
    public Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key) {
      return Optional.ofNullable(records.get(key));
    }

    @Override
    public Optional<IdempotencyRecord> find(RecordKey key) {
      return Optional.ofNullable(records.get(key));
    }

    @Override
    public boolean insert(StoreTransaction tx, IdempotencyRecord record) {
      if (record.key().key().value().equals("replayed")) {
        return records.putIfAbsent(record.key(), record) == null;
      }
      return true; // first executions are not kept, so the map does not grow during the measurement
    }

    @Override
    public boolean update(StoreTransaction tx, IdempotencyRecord next) {
      return false;
    }

    @Override
    public boolean delete(StoreTransaction tx, RecordKey key, long version) {
      return false;
    }

    @Override
    public boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now) {
      return false;
    }

    @Override
    public List<IdempotencyRecord> findLeaseExpired(Instant now, Collection<Operation> operations, int limit) {
      return List.of();
    }

    @Override
    public int purgeExpired(Instant now, int limit) {
      return 0;
    }

    @Override
    public IdempotencyAdmin admin() {
      return NO_ADMIN;
    }
  }
}
