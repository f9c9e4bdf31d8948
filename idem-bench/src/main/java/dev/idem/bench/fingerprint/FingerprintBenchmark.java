package dev.idem.bench.fingerprint;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.FingerprintPolicy;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.fingerprint.JsonCanonicalizer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Fingerprint throughput on realistic JSON request bodies of exactly 1 KiB and 64 KiB (payment orders: nested
 * objects, arrays, strings with escapes and non-ASCII text, integers, prices, coordinates, exponents), against a
 * baseline of plain SHA-256 over the same bytes.
 *
 * <p>Scores are operations per second; throughput in MB/s is {@code ops/s x size / 10^6} (1 KiB = 1024 bytes,
 * 64 KiB = 65536 bytes). Run with
 * {@code -prof gc} for bytes allocated per operation ({@code gc.alloc.rate.norm}).
 *
 * <pre>java -jar idem-bench/target/benchmarks.jar FingerprintBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FingerprintBenchmark {
  private static final String OPERATION = "POST /payments";

  /** Body size in bytes. */
  @Param({"1024", "65536"})
  public int size;

  private byte[] body;
  private Fingerprinter whole;
  private Fingerprinter projected;

  @Setup
  public void setUp() {
    body = realisticBody(size, new Random(8785)).getBytes(StandardCharsets.UTF_8);
    whole = Fingerprinter.ofDefaults();
    projected = Fingerprinter.of(FingerprintPolicy.builder()
        .exclude("/metadata/request_id", "/created_at", "/items/0/description")
        .build());
    Fingerprint check = whole.fingerprint(OPERATION, body, "application/json");
    if (check.fieldHashes().isEmpty() || body.length != size) {
      throw new IllegalStateException("benchmark body is not a JSON object of " + size + " bytes");
    }
    System.out.println("body: " + body.length + " bytes");
  }

  /** Per-thread digest for the baseline, as a caller that hashes raw bytes would keep one. */
  @State(Scope.Thread)
  public static class Digest {
    MessageDigest sha256;

    @Setup
    public void setUp() throws NoSuchAlgorithmException {
      sha256 = MessageDigest.getInstance("SHA-256");
    }
  }

  /** Baseline: SHA-256 of the raw bytes, no parsing, no hex. */
  @Benchmark
  public byte[] sha256Raw(Digest digest) {
    return digest.sha256.digest(body);
  }

  /** The executor's path: parse, canonicalise, hash, and one hash per top-level member. */
  @Benchmark
  public Fingerprint fingerprint() {
    return whole.fingerprint(OPERATION, body, "application/json");
  }

  /** Same, with three excludes (one nested in an array). */
  @Benchmark
  public Fingerprint fingerprintWithExcludes() {
    return projected.fingerprint(OPERATION, body, "application/json");
  }

  /** A body that is not JSON by its content type: hashed raw, plus hex and the result object. */
  @Benchmark
  public Fingerprint fingerprintRaw() {
    return whole.fingerprint(OPERATION, body, "application/octet-stream");
  }

  /** Canonical bytes only (parse and write, returning a copy of the output); no hashing. */
  @Benchmark
  public byte[] canonicalize() {
    return JsonCanonicalizer.canonicalize(body);
  }

  /**
   * A payment order of exactly {@code target} bytes: as many line items as fit, then a delivery note in the
   * metadata padded to the size.
   */
  static String realisticBody(int target, Random random) {
    long seed = random.nextLong();
    int items = 1;
    while (size(order(items + 1, new Random(seed), "")) <= target) {
      items++;
    }
    String bare = order(items, new Random(seed), "");
    int missing = target - size(bare);
    String phrase = "Leave at the back door, ring twice. ";
    String note = phrase.repeat(missing / phrase.length() + 1).substring(0, Math.max(0, missing));
    return order(items, new Random(seed), note);
  }

  private static int size(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  private static String order(int items, Random r, String note) {
    StringBuilder sb = new StringBuilder(256 + items * 300);
    sb.append("{\"id\": \"ord_").append(Long.toHexString(r.nextLong())).append("\", ");
    sb.append("\"customer\": {\"name\": \"Zoë \\\"Q\\\" O'Brien\", \"email\": \"zoe.obrien@example.com\", ");
    sb.append("\"address\": {\"line1\": \"12 Rue de l\\u2019Église\", \"city\": \"Zürich\", \"postal_code\": \"8001\", ");
    sb.append("\"country\": \"CH\", \"location\": {\"lat\": 47.376887, \"lon\": 8.541694}}}, ");
    sb.append("\"amount\": {\"value\": ").append(1000 + r.nextInt(100_000)).append(", \"currency\": \"EUR\", \"exponent\": 2}, ");
    sb.append("\"items\": [");
    for (int i = 0; i < items; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append("{\"sku\": \"SKU-").append(10_000 + r.nextInt(90_000)).append("\", ");
      sb.append("\"quantity\": ").append(1 + r.nextInt(5)).append(", ");
      sb.append("\"unit_price\": ").append(r.nextInt(500)).append('.').append(10 + r.nextInt(90)).append(", ");
      sb.append("\"discount\": ").append(r.nextInt(4) == 0 ? "0.125" : "0").append(", ");
      sb.append("\"weight_kg\": ").append(r.nextDouble() * 20).append(", ");
      sb.append("\"tags\": [\"gift\", \"fragile\", null], \"taxable\": ").append(r.nextBoolean()).append(", ");
      sb.append("\"description\": \"Line ").append(i).append(":\\n\\t\\\"Deluxe\\\" édition \\u00e9t\\u00e9 \\/ 50% off\", ");
      sb.append("\"dimensions_m\": [").append(r.nextInt(100)).append("e-2, ").append(r.nextInt(100)).append("e-2, 1.5E-1]}");
    }
    sb.append("], ");
    sb.append("\"metadata\": {\"request_id\": \"").append(Long.toHexString(r.nextLong())).append("\", ");
    sb.append("\"source\": \"checkout-web\", \"ab_bucket\": ").append(r.nextInt(10)).append(", \"score\": ")
        .append(r.nextDouble()).append(", \"note\": \"").append(note).append("\"}, ");
    sb.append("\"capture\": true, \"created_at\": \"2026-11-22T03:10:00.123Z\"}");
    return sb.toString();
  }
}
