package dev.idem.bench.outbox;

import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.outbox.webhook.WebhookVerifier;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Standard Webhooks signing and verification of a 1 KiB body, with one secret and with two (a rotation: two
 * signatures in the header, two HMACs per verification), against raw HMAC-SHA256 over the same signed bytes
 * ({@code id.timestamp.body}): with a fresh {@code Mac.getInstance} + {@code init} per operation, with a clone of an
 * initialised prototype (what the signer does per secret), and with one reused Mac (the floor).
 *
 * <pre>
 * java -jar idem-bench/target/benchmarks.jar WebhookSigningBenchmark -wi 2 -i 3 -f 1 -w 2s -r 2s
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.WebhookSigningBenchmark -wi 2 -i 3 -f 1 -w 2s -r 2s
 * </pre>
 *
 * The second form runs the same benchmarks and prints the ratios to the baselines.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class WebhookSigningBenchmark {
  private static final String ID = "msg_2QnJtTYrjN6Cf0A5zXpD8wBvE1y";
  private static final long TIMESTAMP = 1_795_000_000L;

  private byte[] body;
  private byte[] signed;
  private byte[] key;
  private WebhookSigner oneSecret;
  private WebhookSigner twoSecrets;
  private WebhookVerifier verifyOne;
  private WebhookVerifier verifyTwo;
  private String headerOne;
  private String headerTwo;
  private Mac prototype;
  private Mac reused;

  @Setup
  public void setUp() throws Exception {
    Random random = new Random(42);
    body = new byte[1024];
    for (int i = 0; i < body.length; i++) {
      body[i] = (byte) (' ' + random.nextInt(95)); // printable, like a JSON body
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write((ID + "." + TIMESTAMP + ".").getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    signed = out.toByteArray();
    key = new byte[32];
    random.nextBytes(key);
    byte[] oldKey = new byte[32];
    random.nextBytes(oldKey);
    WebhookSecret current = WebhookSecret.parse(WebhookSecret.PREFIX + Base64.getEncoder().encodeToString(key));
    WebhookSecret previous = WebhookSecret.parse(WebhookSecret.PREFIX + Base64.getEncoder().encodeToString(oldKey));
    oneSecret = WebhookSigner.of(current);
    twoSecrets = WebhookSigner.of(current, previous);
    Clock clock = Clock.fixed(Instant.ofEpochSecond(TIMESTAMP + 10), ZoneOffset.UTC);
    verifyOne = WebhookVerifier.builder(current).clock(clock).build();
    verifyTwo = WebhookVerifier.builder(current, previous).clock(clock).build();
    headerOne = oneSecret.sign(ID, TIMESTAMP, body);
    headerTwo = twoSecrets.sign(ID, TIMESTAMP, body);
    prototype = Mac.getInstance("HmacSHA256");
    prototype.init(new SecretKeySpec(key, "HmacSHA256"));
    reused = Mac.getInstance("HmacSHA256");
    reused.init(new SecretKeySpec(key, "HmacSHA256"));
    // the signer computes the same HMAC as the raw baselines
    String raw = "v1," + Base64.getEncoder().encodeToString(prototype.doFinal(signed));
    if (!raw.equals(headerOne)) {
      throw new IllegalStateException("the signer and the raw HMAC disagree");
    }
    verifyOne.verify(ID, Long.toString(TIMESTAMP), headerOne, body);
    verifyTwo.verify(ID, Long.toString(TIMESTAMP), headerTwo, body);
  }

  @Benchmark
  public byte[] rawFreshMac() throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(signed);
  }

  @Benchmark
  public byte[] rawClonedMac() throws Exception {
    Mac mac = (Mac) prototype.clone();
    return mac.doFinal(signed);
  }

  @Benchmark
  public byte[] rawReusedMac() {
    return reused.doFinal(signed);
  }

  @Benchmark
  public String signOneSecret() {
    return oneSecret.sign(ID, TIMESTAMP, body);
  }

  @Benchmark
  public String signTwoSecrets() {
    return twoSecrets.sign(ID, TIMESTAMP, body);
  }

  @Benchmark
  public String verifyOneSecret() {
    verifyOne.verify(ID, "1795000000", headerOne, body);
    return headerOne;
  }

  @Benchmark
  public String verifyTwoSecrets() {
    verifyTwo.verify(ID, "1795000000", headerTwo, body);
    return headerTwo;
  }

  /** Runs the benchmarks (JMH command-line options accepted) and prints ops/s and the ratios to the baselines. */
  public static void main(String[] args) throws Exception {
    CommandLineOptions cli = new CommandLineOptions(args);
    Collection<RunResult> results = new Runner(new OptionsBuilder().parent(cli)
        .include(WebhookSigningBenchmark.class.getName() + "\\.").build()).run();
    Map<String, double[]> score = new HashMap<>();
    for (RunResult r : results) {
      String name = r.getParams().getBenchmark();
      name = name.substring(name.lastIndexOf('.') + 1);
      score.put(name, new double[] {r.getPrimaryResult().getScore(), r.getPrimaryResult().getScoreError()});
    }
    System.out.println();
    System.out.println("| benchmark | ops/s | +- (99.9%) | / rawFreshMac | / rawClonedMac | HMACs per op |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
    String[][] rows = {{"rawFreshMac", "1"}, {"rawClonedMac", "1"}, {"rawReusedMac", "1"}, {"signOneSecret", "1"},
        {"signTwoSecrets", "2"}, {"verifyOneSecret", "1"}, {"verifyTwoSecrets", "2"}};
    double fresh = score.getOrDefault("rawFreshMac", new double[] {Double.NaN})[0];
    double cloned = score.getOrDefault("rawClonedMac", new double[] {Double.NaN})[0];
    for (String[] row : rows) {
      double[] s = score.get(row[0]);
      if (s == null) {
        continue;
      }
      System.out.println(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.2f | %.2f | %s |", row[0], s[0], s[1],
          s[0] / fresh, s[0] / cloned, row[1]));
    }
  }
}
