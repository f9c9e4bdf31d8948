package dev.idem.cli;

import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code idem demo}: starts the reference payments service on a free port with a fresh H2 database, walks through
 * the HTTP contract over real HTTP, prints every exchange, and exits 0 only if every step behaved as the contract
 * says.
 */
final class DemoCommand implements Command {
  private static final String ALICE = "sk_test_alice";
  private static final String BOB = "sk_test_bob";

  /** Where the temporary folder is made without {@code --data}; null for the system's temporary directory. */
  private final Path tempRoot;
  /** Spring Boot arguments after the demo's own (tests use them to make the start fail). */
  private final List<String> springArgs;

  DemoCommand() {
    this(null, List.of());
  }

  DemoCommand(Path tempRoot, List<String> springArgs) {
    this.tempRoot = tempRoot;
    this.springArgs = List.copyOf(springArgs);
  }

  @Override
  public String name() {
    return "demo";
  }

  @Override
  public String summary() {
    return "start the payments service and walk through the HTTP contract, checking every step";
  }

  @Override
  public String usage() {
    return "usage: idem demo [--data DIR] [--quiet]\n\n"
        + "Starts the reference payments service on a free port of 127.0.0.1 with a fresh embedded H2 database\n"
        + "under DIR (default: a new temporary directory, removed at the end) and walks through the HTTP contract:\n"
        + "a payment, its replay, the same key with another body, 20 concurrent duplicates, a provider timeout after\n"
        + "its commit and the retry, a refund the same three ways, and another tenant reusing a key. Prints each\n"
        + "exchange (--quiet: only the checks). Exit status 0 when every step behaved as the contract says, 1\n"
        + "otherwise. Logs go to stderr; stdout carries only the walkthrough.\n";
  }

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    Path data = null;
    boolean quiet = false;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--data")) {
        if (i + 1 >= args.size()) {
          return usageError(err, "--data needs a value");
        }
        data = Path.of(args.get(++i));
      } else if (a.equals("--quiet")) {
        quiet = true;
      } else if (a.equals("--help") || a.equals("-h")) {
        out.print(usage());
        return Main.OK;
      } else {
        return usageError(err, "unknown option '" + a + "'");
      }
    }
    // The folder this run made for itself, removed at the end however the run ends; never one under --data.
    Path made = null;
    try {
      Path dir;
      if (data != null) {
        dir = Files.createDirectories(data).resolve("demo-" + UUID.randomUUID());
      } else {
        made = tempRoot == null ? Files.createTempDirectory("idem-demo-")
            : Files.createTempDirectory(tempRoot, "idem-demo-");
        dir = made;
      }
      String url = "jdbc:h2:file:" + dir.toAbsolutePath().resolve("payments") + ";WRITE_DELAY=0";
      out.println("Starting the payments service (H2 at " + dir + ") ...");
      List<String> spring = new ArrayList<>(List.of("--idem.name=demo"));
      spring.addAll(springArgs);
      try (PaymentsService service = PaymentsService.start(0, url, true, spring)) {
        out.println("Listening on " + service.url("/") + "\n");
        Walkthrough walk = new Walkthrough(service, out, quiet);
        walk.run();
        out.println();
        if (walk.failures == 0) {
          out.println("Done: " + walk.checks + " checks; every step behaved as the contract says.");
          return Main.OK;
        }
        out.println("FAILED: " + walk.failures + " of " + walk.checks + " checks did not hold (see FAIL above).");
        return Main.FAILED;
      }
    } catch (Exception e) {
      err.println("idem demo: " + Main.redact(e.toString()));
      return Main.FAILED;
    } finally {
      if (made != null) {
        remove(made, err);
      }
    }
  }

  private int usageError(PrintStream err, String problem) {
    err.println("idem " + name() + ": " + problem);
    err.print(usage());
    return Main.USAGE;
  }

  /** Deletes {@code dir} and everything in it; says so on {@code err} when it cannot. */
  private static void remove(Path dir, PrintStream err) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      err.println("idem demo: could not remove the temporary folder " + dir + ": " + e);
    }
  }

  /** One run of the scenarios against a started service. */
  private static final class Walkthrough {
    private final PaymentsService service;
    private final PrintStream out;
    private final boolean quiet;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    int checks;
    int failures;

    Walkthrough(PaymentsService service, PrintStream out, boolean quiet) {
      this.service = service;
      this.out = out;
      this.quiet = quiet;
    }

    void run() throws Exception {
      String payKey = "demo-pay-" + run;
      String body = "{\"account_id\":\"acct_demo\",\"amount\":1250,\"currency\":\"EUR\",\"description\":\"demo\"}";

      step("1. A first payment runs once; its answer is kept");
      HttpResponse<String> first = send("POST", "/payments", ALICE, payKey, body, true);
      check(first.statusCode() == 201, "201 Created", first);
      check("stored".equals(header(first, IdemHeaders.IDEMPOTENCY_STATUS)), "Idempotency-Status: stored", first);
      check(payKey.equals(header(first, IdemHeaders.IDEMPOTENCY_KEY)), "the key is echoed in Idempotency-Key", first);
      String paymentId = field(first.body(), "id");

      step("2. The client retries (a timeout, a double click): the kept answer is replayed");
      HttpResponse<String> replay = send("POST", "/payments", ALICE, payKey, body, true);
      check(replay.statusCode() == 201 && replay.body().equals(first.body()), "same status and byte-identical body"
          + " (same payment " + paymentId + ")", replay);
      check("replayed".equals(header(replay, IdemHeaders.IDEMPOTENCY_STATUS)) && "true".equals(header(replay,
          IdemHeaders.IDEMPOTENT_REPLAYED)), "Idempotency-Status: replayed, Idempotent-Replayed: true", replay);

      step("3. The same key with another body is refused: a key names one intent");
      HttpResponse<String> mismatch = send("POST", "/payments", ALICE, payKey, body.replace("1250", "9999"), true);
      check(mismatch.statusCode() == 422 && mismatch.body().contains(ProblemCode.PAYLOAD_MISMATCH.code())
          && mismatch.body().contains("amount"), "422 problem CONFLICT.idempotency.payload_mismatch naming amount",
          mismatch);

      step("4. 20 concurrent duplicates of a new payment: one payment, one charge");
      long chargesBefore = number(get("/admin/provider/stats", null).body(), "charges");
      long paymentsBefore = number(get("/ledger/summary", ALICE).body(), "payments");
      String burstKey = "demo-burst-" + run;
      String burstBody = "{\"account_id\":\"acct_demo\",\"amount\":300,\"currency\":\"EUR\"}";
      List<HttpResponse<String>> burst = concurrently(20, () -> send("POST", "/payments", ALICE, burstKey,
          burstBody, false));
      Set<String> bodies = new LinkedHashSet<>();
      int created = 0;
      int conflicts = 0;
      boolean onlyExpected = true;
      for (HttpResponse<String> r : burst) {
        if (r.statusCode() == 201) {
          created++;
          bodies.add(r.body());
        } else if (r.statusCode() == 409 && r.body().contains(ProblemCode.IN_PROGRESS.code())
            && r.headers().firstValue(IdemHeaders.RETRY_AFTER).isPresent()) {
          conflicts++;
        } else {
          onlyExpected = false;
        }
      }
      out.println("   " + burst.size() + " answers: " + created + " x 201 (" + bodies.size() + " distinct bodies), "
          + conflicts + " x 409 in progress with Retry-After");
      check(onlyExpected && bodies.size() <= 1, "every answer is the same 201 or a 409 in progress", null);
      HttpResponse<String> settled = send("POST", "/payments", ALICE, burstKey, burstBody, false);
      check(settled.statusCode() == 201 && (bodies.isEmpty() || bodies.contains(settled.body())),
          "a retry after the burst replays the one payment", settled);
      check(number(get("/admin/provider/stats", null).body(), "charges") == chargesBefore + 1,
          "the provider charged exactly once", null);
      check(number(get("/ledger/summary", ALICE).body(), "payments") == paymentsBefore + 1,
          "the ledger has exactly one new payment", null);

      step("5. The provider commits the charge, then the call times out; the client retries with the same key");
      String timeoutKey = "demo-timeout-" + run;
      String timeoutBody = "{\"account_id\":\"acct_demo\",\"amount\":700,\"currency\":\"EUR\"}";
      long charges = number(get("/admin/provider/stats", null).body(), "charges");
      long duplicates = number(get("/admin/provider/stats", null).body(), "duplicate_charge_attempts");
      send("PUT", "/admin/faults", null, null, "{\"provider_timeout_after_commit_rate\":1.0,"
          + "\"provider_error_rate\":0,\"provider_latency_ms\":0}", true);
      HttpResponse<String> timedOut = send("POST", "/payments", ALICE, timeoutKey, timeoutBody, true);
      check(timedOut.statusCode() == 504 && timedOut.body().contains("\"retryable\":true"),
          "504 problem, retryable: nothing was kept, the key is free for the retry", timedOut);
      send("PUT", "/admin/faults", null, null, "{\"provider_timeout_after_commit_rate\":0,"
          + "\"provider_error_rate\":0,\"provider_latency_ms\":0}", true);
      HttpResponse<String> retried = retryWhileInProgress("POST", "/payments", ALICE, timeoutKey, timeoutBody);
      check(retried.statusCode() == 201 && "stored".equals(header(retried, IdemHeaders.IDEMPOTENCY_STATUS)),
          "the retry resumes the payment and captures it", retried);
      String stats = get("/admin/provider/stats", null).body();
      check(number(stats, "charges") == charges + 1 && number(stats, "duplicate_charge_attempts") == duplicates + 1,
          "one charge at the provider: the retry re-sent the same provider key and got the original charge", null);

      step("6. A refund, the same three ways");
      String refundKey = "demo-refund-" + run;
      String refundBody = "{\"payment_id\":\"" + paymentId + "\",\"amount\":500}";
      HttpResponse<String> refund = send("POST", "/refunds", ALICE, refundKey, refundBody, true);
      check(refund.statusCode() == 201 && "stored".equals(header(refund, IdemHeaders.IDEMPOTENCY_STATUS)), "201 stored",
          refund);
      HttpResponse<String> refundReplay = send("POST", "/refunds", ALICE, refundKey, refundBody, true);
      check(refundReplay.statusCode() == 201 && refundReplay.body().equals(refund.body())
          && "replayed".equals(header(refundReplay, IdemHeaders.IDEMPOTENCY_STATUS)), "replayed, byte-identical",
          refundReplay);
      HttpResponse<String> refundMismatch = send("POST", "/refunds", ALICE, refundKey,
          refundBody.replace("500", "600"), true);
      check(refundMismatch.statusCode() == 422 && refundMismatch.body().contains("payload_mismatch"),
          "422 payload mismatch", refundMismatch);

      step("7. Another tenant reuses the first key: an independent payment, never alice's answer");
      HttpResponse<String> bob = send("POST", "/payments", BOB, payKey, body, true);
      check(bob.statusCode() == 201 && "stored".equals(header(bob, IdemHeaders.IDEMPOTENCY_STATUS))
          && !paymentId.equals(field(bob.body(), "id")), "201 stored with a new payment id", bob);
      HttpResponse<String> peek = get("/payments/" + paymentId, BOB);
      check(peek.statusCode() == 404, "bob cannot read alice's payment (404)", peek);

      step("8. The books balance");
      String summary = get("/ledger/summary", ALICE).body();
      long alicePayments = number(summary, "payments");
      long bobPayments = number(get("/ledger/summary", BOB).body(), "payments");
      out.println("   alice: " + summary);
      check(alicePayments == paymentsBefore + 2 && number(summary, "refunds") == 1
          && number(summary, "refunded_amount") == 500, "alice: 3 payments, 1 refund of 500", null);
      check(number(get("/admin/provider/stats", null).body(), "charges") == alicePayments + bobPayments,
          "provider charges equal payments in the ledger", null);
    }

    private void step(String title) {
      out.println("\n" + title);
    }

    private void check(boolean ok, String what, HttpResponse<String> response) {
      checks++;
      if (ok) {
        out.println("   ok    " + what);
      } else {
        failures++;
        out.println("   FAIL  " + what + (response == null ? "" : ": got " + response.statusCode() + " "
            + response.body()));
      }
    }

    private HttpResponse<String> get(String path, String apiKey) throws Exception {
      return send("GET", path, apiKey, null, null, false);
    }

    private HttpResponse<String> send(String method, String path, String apiKey, String key, String body,
        boolean print) throws Exception {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(service.url(path))).timeout(Duration.ofSeconds(30))
          .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(body));
      if (body != null) {
        b.header("Content-Type", "application/json");
      }
      if (apiKey != null) {
        b.header("Authorization", "Bearer " + apiKey);
      }
      if (key != null) {
        b.header(IdemHeaders.IDEMPOTENCY_KEY, key);
      }
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      if (print && !quiet) {
        out.println("   > " + method + " " + path + (apiKey == null ? "" : "  [" + apiKey + "]")
            + (key == null ? "" : "  Idempotency-Key: " + key) + (body == null ? "" : "  " + body));
        String status = header(r, IdemHeaders.IDEMPOTENCY_STATUS);
        out.println("   < " + r.statusCode() + (status == null ? "" : "  Idempotency-Status: " + status)
            + "  " + abbreviate(r.body()));
      }
      return r;
    }

    /**
     * Sends until the answer is not 409 in progress, waiting the Retry-After each time (the completer may be
     * finishing the released payment at that moment), for at most a minute: what a well-behaved client does.
     */
    private HttpResponse<String> retryWhileInProgress(String method, String path, String apiKey, String key,
        String body) throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      HttpResponse<String> r = send(method, path, apiKey, key, body, true);
      while (r.statusCode() == 409 && r.body().contains("in_progress") && System.nanoTime() < deadline) {
        long seconds = Long.parseLong(r.headers().firstValue(IdemHeaders.RETRY_AFTER).orElse("1"));
        out.println("   (in progress; retrying after " + seconds + " s, as Retry-After says)");
        TimeUnit.SECONDS.sleep(Math.min(seconds, 30));
        r = send(method, path, apiKey, key, body, true);
      }
      return r;
    }

    private List<HttpResponse<String>> concurrently(int n, java.util.concurrent.Callable<HttpResponse<String>> call)
        throws Exception {
      ExecutorService pool = Executors.newFixedThreadPool(n);
      try {
        CyclicBarrier barrier = new CyclicBarrier(n);
        List<Future<HttpResponse<String>>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          futures.add(pool.submit(() -> {
            barrier.await(30, TimeUnit.SECONDS);
            return call.call();
          }));
        }
        List<HttpResponse<String>> answers = new ArrayList<>();
        for (Future<HttpResponse<String>> f : futures) {
          answers.add(f.get(60, TimeUnit.SECONDS));
        }
        return answers;
      } finally {
        pool.shutdownNow();
      }
    }

    private static String header(HttpResponse<?> r, String name) {
      return r.headers().firstValue(name).orElse(null);
    }

    private static String abbreviate(String s) {
      return s.length() <= 240 ? s : s.substring(0, 237) + "...";
    }

    private static String field(String json, String name) {
      Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
      return m.find() ? m.group(1) : "";
    }

    private static long number(String json, String name) {
      Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*(-?[0-9]+)").matcher(json);
      return m.find() ? Long.parseLong(m.group(1)) : Long.MIN_VALUE;
    }
  }

}
