package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.idem.retry.spi.RetryListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every snippet of docs/retry.md, compiled and run; and a check that the guide shows exactly these snippets, each
 * with imports that this file's own imports cover.
 */
class RetryGuideTest {
  private static final String GUIDE = "../docs/retry.md";
  private static final String SELF = "src/test/java/dev/idem/retry/RetryGuideTest.java";

  /** Stands for the user's own call: the exchange rate of a currency pair, from some remote service. */
  interface RateSource {
    String fetch(String pair) throws IOException;

    default CompletableFuture<String> fetchAsync(String pair) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }
  }

  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    cleanup.forEach(Runnable::run);
  }

  /** A source that fails {@code failures} times with {@code failure}, then answers "1.0842". */
  private static RateSource failing(int failures, IOException failure, AtomicInteger calls) {
    return pair -> {
      if (calls.incrementAndGet() <= failures) {
        throw failure;
      }
      return "1.0842";
    };
  }

  // docs/retry.md:begin retry-after-exception
  /** What your client throws for a 429 or a 503: it carries the delay the server asked for. */
  static final class ThrottledException extends IOException implements RetryAfterHint {
    private static final long serialVersionUID = 1L;
    private final Duration retryAfter;

    ThrottledException(Duration retryAfter) {
      super("throttled; the server asks for " + retryAfter);
      this.retryAfter = retryAfter;
    }

    @Override
    public Optional<Duration> retryAfter() {
      return Optional.of(retryAfter);
    }
  }
  // docs/retry.md:end retry-after-exception

  @Test
  void firstRetry() {
    AtomicInteger calls = new AtomicInteger();
    RateSource rates = failing(2, new IOException("connection reset"), calls);

    // docs/retry.md:begin first-retry
    RetryPolicy<String> policy = RetryPolicy.<String>builder()
        .maxAttempts(4)                                          // the first attempt and at most 3 retries
        .backoff(Duration.ofMillis(100), Duration.ofSeconds(2))  // 100 ms, 200 ms, 400 ms, ... at most 2 s
        .jitter(Jitter.FULL)                                     // each delay drawn uniformly in [0, that]
        .build();
    Retry<String> retry = Retry.of(policy).withName("exchange-rates");

    String rate = retry.call(() -> rates.fetch("EUR/USD"));
    // docs/retry.md:end first-retry

    assertThat(rate).isEqualTo("1.0842");
    assertThat(calls).hasValue(3);
  }

  @Test
  void givesUpWithRetryExhausted() {
    AtomicInteger calls = new AtomicInteger();
    RateSource rates = failing(100, new IOException("connection refused"), calls);
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().maxAttempts(3)
        .backoff(Duration.ofMillis(1), Duration.ofMillis(5)).build());

    assertThatThrownBy(() -> retry.call(() -> rates.fetch("EUR/USD")))
        .isInstanceOf(RetryExhaustedException.class)
        .hasCauseInstanceOf(IOException.class);
    assertThat(calls).hasValue(3);
  }

  @Test
  void classifyFailuresAndResults() throws Exception {
    URI uri = serve(503, 503, 200);
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest request = HttpRequest.newBuilder(uri).build();

    // docs/retry.md:begin classify
    RetryPolicy<HttpResponse<String>> policy = RetryPolicy.<HttpResponse<String>>builder()
        .retryOn(IOException.class)                // connection failures and timeouts...
        .abortOn(SSLHandshakeException.class)      // ...but not a certificate that will not change by itself
        .retryOnResult(response -> Set.of(408, 429, 500, 502, 503, 504).contains(response.statusCode()))
        .backoff(Duration.ofMillis(50), Duration.ofSeconds(1))
        .build();
    Retry<HttpResponse<String>> retry = Retry.of(policy).withName("inventory");

    HttpResponse<String> response = retry.call(() -> http.send(request, HttpResponse.BodyHandlers.ofString()));
    // docs/retry.md:end classify

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(served).hasValue(3);
    assertThat(policy.isRetryable(new SSLHandshakeException("untrusted"))).isFalse();
    assertThat(policy.isRetryable(new IllegalStateException("bug"))).isFalse();
  }

  @Test
  void retryAfterFromAResponse() throws Exception {
    URI uri = serve(429, 200);
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest request = HttpRequest.newBuilder(uri).build();
    long started = System.nanoTime();

    // docs/retry.md:begin retry-after
    Clock clock = Clock.systemUTC();
    RetryPolicy<HttpResponse<String>> policy = RetryPolicy.<HttpResponse<String>>builder()
        .retryOnResult(response -> response.statusCode() == 429 || response.statusCode() == 503)
        .retryAfter(response -> RetryAfter.parse(
            response.headers().firstValue("Retry-After").orElse(null),  // "1", or an HTTP-date
            response.headers().firstValue("Date").orElse(null),         // dates are read against the server's clock
            clock))
        .build();

    HttpResponse<String> response =
        Retry.of(policy).call(() -> http.send(request, HttpResponse.BodyHandlers.ofString()));
    // docs/retry.md:end retry-after

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(990));
  }

  @Test
  void deadlineEndsTheCallAtOnce() {
    RateSource rates = failing(100, new ThrottledException(Duration.ofSeconds(30)), new AtomicInteger());
    String cachedRate = "1.0800";
    long started = System.nanoTime();

    // docs/retry.md:begin deadline
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder()
        .retryOn(IOException.class)
        .deadline(Duration.ofSeconds(3))   // attempts and delays together; the default is 30 s
        .build());

    String rate;
    try {
      rate = retry.call(() -> rates.fetch("EUR/USD"));
    } catch (RetryDeadlineExceededException e) {
      // the server asked for 30 s and 3 s remain: the call ends now instead of sleeping first
      rate = cachedRate;
    }
    // docs/retry.md:end deadline

    assertThat(rate).isEqualTo(cachedRate);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void retryBudget() {
    AtomicInteger calls = new AtomicInteger();
    RateSource rates = failing(1_000, new IOException("connection refused"), calls);

    // docs/retry.md:begin budget
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);   // one per destination, shared by every call to it
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder()
            .backoff(Duration.ofMillis(10), Duration.ofMillis(200))
            .build())
        .withName("exchange-rates")
        .withBudget(budget);
    // docs/retry.md:end budget

    assertThatThrownBy(() -> retry.call(() -> rates.fetch("EUR/USD"))).isInstanceOf(RetryExhaustedException.class);
    assertThatThrownBy(() -> retry.call(() -> rates.fetch("EUR/USD")))
        .isInstanceOfSatisfying(RetryBudgetExhaustedException.class, e -> assertThat(e.attempts()).isEqualTo(1));
    assertThat(calls).hasValue(6);
  }

  @Test
  void circuitBreaker() {
    AtomicInteger calls = new AtomicInteger();
    RateSource rates = failing(1_000, new IOException("connection refused"), calls);

    // docs/retry.md:begin circuit-breaker
    CircuitBreaker breaker = CircuitBreaker.builder()
        .name("exchange-rates")
        .countWindow(20)                  // judge the last 20 attempts...
        .minimumCalls(10)                 // ...once there are at least 10
        .failureRateThreshold(50)         // open at 50 % failures
        .openDuration(Duration.ofSeconds(30), 2.0, Duration.ofMinutes(5))  // 30 s, then 60 s, ... at most 5 min
        .halfOpenProbes(3)                // then let 3 probes through
        .build();
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder()
            .maxAttempts(3)
            .backoff(Duration.ofMillis(10), Duration.ofMillis(100))
            .build())
        .withCircuitBreaker(breaker);
    // docs/retry.md:end circuit-breaker

    for (int i = 0; i < 4; i++) {
      assertThatThrownBy(() -> retry.call(() -> rates.fetch("EUR/USD"))).isInstanceOf(RetryException.class);
    }
    int before = calls.get();
    assertThatThrownBy(() -> retry.call(() -> rates.fetch("EUR/USD"))).isInstanceOf(CircuitOpenException.class);
    assertThat(calls).hasValue(before);
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
  }

  @Test
  void hedging() {
    AtomicInteger copies = new AtomicInteger();
    RateSource rates = new RateSource() {
      @Override
      public String fetch(String pair) {
        throw new UnsupportedOperationException();
      }

      @Override
      public CompletableFuture<String> fetchAsync(String pair) {
        // the first copy hangs (a slow replica), the hedge answers at once
        return copies.incrementAndGet() == 1 ? new CompletableFuture<>() : CompletableFuture.completedFuture("1.0842");
      }
    };

    // docs/retry.md:begin hedging
    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder()
            .attemptTimeout(Duration.ofSeconds(2))   // enforced by callAsync: a late attempt fails and is retried
            .build())
        .withName("exchange-rates")
        .withHedging(Duration.ofMillis(200));       // no answer after 200 ms: start a second copy

    CompletableFuture<String> rate = retry.callAsync(() -> rates.fetchAsync("EUR/USD"), scheduler);
    // docs/retry.md:end hedging
    cleanup.add(scheduler::shutdownNow);

    assertThat(rate.join()).isEqualTo("1.0842");
    assertThat(copies).hasValue(2);
  }

  @Test
  void listener() {
    RateSource rates = failing(2, new IOException("connection reset"), new AtomicInteger());

    // docs/retry.md:begin listener
    LongAdder retries = new LongAdder();
    RetryListener listener = new RetryListener() {
      @Override
      public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {
        retries.increment();
        System.getLogger(name).log(System.Logger.Level.INFO,
            "attempt " + attempt + " failed (" + cause + "); next one in " + delay.toMillis() + " ms");
      }

      @Override
      public void onFailure(String name, int attempts, Throwable failure) {
        System.getLogger(name).log(System.Logger.Level.WARNING, "gave up after " + attempts + " attempts", failure);
      }
    };
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder()
            .backoff(Duration.ofMillis(10), Duration.ofMillis(100))
            .build())
        .withName("exchange-rates")
        .withListener(listener);
    // docs/retry.md:end listener

    assertThat(retry.call(() -> rates.fetch("EUR/USD"))).isEqualTo("1.0842");
    assertThat(retries.sum()).isEqualTo(2);
  }

  @Test
  void testingWithoutSleeping() {
    RateSource rates = failing(3, new IOException("connection reset"), new AtomicInteger());

    // docs/retry.md:begin testing
    List<Duration> waits = new ArrayList<>();
    Retry<String> retry = Retry.of(RetryPolicy.<String>ofDefaults())
        .withSleeper(waits::add)                  // record the delays instead of sleeping
        .withRandom(new SplittableRandom(42));    // the same jitter on every run

    String rate = retry.call(() -> rates.fetch("EUR/USD"));
    // docs/retry.md:end testing

    assertThat(rate).isEqualTo("1.0842");
    assertThat(waits).hasSize(3).allSatisfy(d -> assertThat(d).isBetween(Duration.ZERO, Duration.ofMillis(400)));
  }

  @Test
  void theGuideShowsEverySnippetWithImportsThisFileCompiles() throws Exception {
    List<String> self = Files.readAllLines(Path.of(SELF));
    Map<String, String> regions = regions(self);
    Set<String> ownImports = new LinkedHashSet<>();
    for (String line : self) {
      if (line.startsWith("import ")) {
        ownImports.add(line.strip());
      }
    }
    String guide = Files.readString(Path.of(GUIDE), StandardCharsets.UTF_8);

    List<String> shown = new ArrayList<>();
    for (String block : javaBlocks(guide)) {
      List<String> imports = new ArrayList<>();
      List<String> code = new ArrayList<>();
      for (String line : block.split("\n", -1)) {
        if (code.isEmpty() && line.startsWith("import ")) {
          imports.add(line.strip());
        } else if (!(code.isEmpty() && line.isBlank())) {
          code.add(line);
        }
      }
      String snippet = String.join("\n", code).stripTrailing();
      assertThat(imports).as("imports shown above\n%s", snippet).isNotEmpty();
      for (String i : imports) {
        assertThat(ownImports.contains(i) || isRetryType(i)).as("%s, shown above\n%s", i, snippet).isTrue();
      }
      Set<String> needed = new LinkedHashSet<>();
      java.util.regex.Matcher words = java.util.regex.Pattern.compile("\\b[A-Z]\\w*\\b").matcher(snippet);
      while (words.find()) {
        String word = words.group();
        if (Files.exists(Path.of("src/main/java/dev/idem/retry/" + word + ".java"))
            || ownImports.stream().anyMatch(i -> i.endsWith("." + word + ";"))) {
          needed.add(word);
        }
      }
      for (String word : needed) {
        assertThat(imports).as("an import of %s above\n%s", word, snippet).anyMatch(i -> i.endsWith("." + word + ";"));
      }
      assertThat(regions).as("regions of %s", SELF).containsValue(snippet);
      shown.add(snippet);
    }

    assertThat(regions).hasSizeGreaterThanOrEqualTo(9);
    assertThat(shown).containsExactlyInAnyOrderElementsOf(regions.values());
  }

  /** Whether an import names a top-level type of this package, which this file uses without importing it. */
  private static boolean isRetryType(String importLine) {
    String name = importLine.substring("import ".length(), importLine.length() - 1);
    return name.matches("dev\\.idem\\.retry\\.[A-Z]\\w*")
        && Files.exists(Path.of("src/main/java/" + name.replace('.', '/') + ".java"));
  }

  /** The marked regions of this file, each without its common indentation. */
  static Map<String, String> regions(List<String> lines) {
    Map<String, String> regions = new LinkedHashMap<>();
    String name = null;
    List<String> body = new ArrayList<>();
    for (String line : lines) {
      String s = line.strip();
      if (s.startsWith("// docs/retry.md:begin ")) {
        name = s.substring("// docs/retry.md:begin ".length());
        body.clear();
      } else if (s.startsWith("// docs/retry.md:end ")) {
        assertThat(s).isEqualTo("// docs/retry.md:end " + name);
        int indent = body.stream().filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        List<String> code = new ArrayList<>();
        for (String l : body) {
          code.add(l.isBlank() ? "" : l.substring(indent));
        }
        assertThat(regions.put(name, String.join("\n", code).stripTrailing())).as("region " + name).isNull();
        name = null;
      } else if (name != null) {
        body.add(line);
      }
    }
    return regions;
  }

  /** The bodies of the guide's {@code ```java} blocks. */
  static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    StringBuilder current = null;
    for (String line : markdown.split("\n", -1)) {
      if (current == null && line.strip().equals("```java")) {
        current = new StringBuilder();
      } else if (current != null && line.strip().equals("```")) {
        blocks.add(current.toString());
        current = null;
      } else if (current != null) {
        current.append(line).append('\n');
      }
    }
    return blocks;
  }

  private final AtomicInteger served = new AtomicInteger();

  /** A local HTTP server that answers with these statuses in turn (the last one from then on). */
  private URI serve(int... statuses) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      int n = served.getAndIncrement();
      int status = statuses[Math.min(n, statuses.length - 1)];
      if (status == 429 || status == 503) {
        exchange.getResponseHeaders().set("Retry-After", "1");
      }
      byte[] body = ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(status, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    cleanup.add(() -> server.stop(0));
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/rates");
  }
}
