package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.ServiceOfItsOwn;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Slow clients cannot take the service off the air, with its default settings (Tomcat's 200 request threads):
 * {@value #SLOW} connections on loopback each send the headers of a {@code POST /payments} and then its body a byte
 * every half second. While they are open, other clients (health checks, reads, payments whose body comes with their
 * headers) are answered, each within {@value #PROBE_SECONDS} s, after the first slow one was refused for want of a
 * free body reader (so every reader is taken by a slow body while they run); the slow ones get 503
 * {@code TRANSIENT.overloaded}
 * at once beyond the body readers the service admits, and 408 {@code TRANSIENT.request_timeout} at its body deadline
 * otherwise, and none of them made a payment. Bounded: the slow writer stops after {@value #MAX_ROUNDS} rounds.
 */
class SlowClientsTest extends ServiceOfItsOwn {
  static final int SLOW = 300;
  static final int PROBE_SECONDS = 8;
  static final int MAX_ROUNDS = 60;
  static final int PROBES = 5;

  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final Caller alice = new Caller("sk_slow_alice_" + run, "alice");
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(PROBE_SECONDS)).build();

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), "--payments.outbox.enabled=false");
  }

  @Test
  void otherClientsAreServedWhileHundredsOfSlowBodiesArrive() throws Exception {
    String account = "acct_slow_" + run;
    List<Socket> slow = new ArrayList<>();
    ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
    ExecutorService readers = Executors.newFixedThreadPool(SLOW);
    try {
      for (int i = 0; i < SLOW; i++) {
        Socket s = new Socket("127.0.0.1", service.uri("/").getPort());
        s.setSoTimeout(60_000);
        s.getOutputStream().write(("POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + alice.apiKey() + "\r\nContent-Type: application/json\r\nIdempotency-Key: slow-" + run + "-" + i
            + "\r\nContent-Length: 1000\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
        slow.add(s);
      }
      int[] rounds = {0};
      trickle.scheduleAtFixedRate(() -> {
        if (++rounds[0] > MAX_ROUNDS) {
          return;
        }
        for (Socket s : slow) {
          try {
            s.getOutputStream().write(' ');
          } catch (IOException e) {
            // the service answered and closed it: nothing more to send there
          }
        }
      }, 500, 500, TimeUnit.MILLISECONDS);
      CompletionService<String> answers = new ExecutorCompletionService<>(readers);
      for (Socket s : slow) {
        answers.submit(() -> readAll(s));
      }
      // the first answer is a 503: every body reader is taken by a slow body when the probes start
      Future<String> first = answers.poll(PROBE_SECONDS, TimeUnit.SECONDS);
      assertThat(first).as("a slow body refused at once").isNotNull();
      String refused = first.get();
      assertThat(HostileFramingTest.statusOf(refused)).as(refused).isEqualTo(503);

      for (int i = 0; i < PROBES; i++) {
        Answer health = probe(HttpRequest.newBuilder(service.uri("/actuator/health")).GET());
        assertThat(health.status()).as("health while slow bodies arrive: " + health).isEqualTo(200);
        Answer ledger = probe(HttpRequest.newBuilder(service.uri("/ledger"))
            .header("Authorization", "Bearer " + alice.apiKey()).GET());
        assertThat(ledger.status()).as("a read while slow bodies arrive: " + ledger).isEqualTo(200);
        Answer pay = probe(HttpRequest.newBuilder(service.uri("/payments"))
            .header("Authorization", "Bearer " + alice.apiKey()).header("Content-Type", "application/json")
            .header("Idempotency-Key", "probe-" + run + "-" + i).POST(HttpRequest.BodyPublishers.ofString(
                "{\"account_id\":\"" + account + "\",\"amount\":100,\"currency\":\"EUR\"}")));
        assertThat(pay.status()).as("a payment while slow bodies arrive: " + pay).isEqualTo(201);
      }

      Map<String, Integer> outcomes = new TreeMap<>();
      for (int i = 0; i < SLOW; i++) {
        Future<String> next = i == 0 ? first : answers.poll(60, TimeUnit.SECONDS);
        assertThat(next).as("every slow body is answered").isNotNull();
        String answer = next.get();
        int status = HostileFramingTest.statusOf(answer);
        String code = HostileFramingTest.assertProblem(answer, status, "a slow body").path("code").asString();
        outcomes.merge(status + " " + code, 1, Integer::sum);
        if (status == 503) {
          assertThat(answer).containsIgnoringCase("\r\nRetry-After: 1\r\n");
        }
      }
      assertThat(outcomes.keySet()).as(outcomes.toString())
          .containsOnly("408 TRANSIENT.request_timeout", "503 TRANSIENT.overloaded")
          .contains("408 TRANSIENT.request_timeout", "503 TRANSIENT.overloaded");
      assertThat(service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key LIKE ?", "slow-" + run + "-%"))
          .isZero();
      String meters = service.get("/actuator/prometheus", null).text();
      assertThat(refusals(meters, "TRANSIENT.overloaded")).as(meters)
          .isEqualTo(outcomes.get("503 TRANSIENT.overloaded"));
      assertThat(refusals(meters, "TRANSIENT.request_timeout"))
          .isEqualTo(outcomes.get("408 TRANSIENT.request_timeout"));
      assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(PROBES);
    } finally {
      trickle.shutdownNow();
      readers.shutdownNow();
      for (Socket s : slow) {
        s.close();
      }
    }
  }

  /** The count of {@code payments_http_body_refused_total} for a problem code in a Prometheus scrape. */
  private static int refusals(String scrape, String code) {
    Matcher m = Pattern.compile("(?m)^payments_http_body_refused_total\\{[^}]*code=\"" + Pattern.quote(code)
        + "\"[^}]*} ([0-9.]+)$").matcher(scrape);
    assertThat(m.find()).as("the refusals of " + code + " are counted").isTrue();
    return (int) Double.parseDouble(m.group(1));
  }

  private Answer probe(HttpRequest.Builder request) throws IOException, InterruptedException {
    HttpResponse<byte[]> r = http.send(request.timeout(Duration.ofSeconds(PROBE_SECONDS)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
    return new Answer(r.statusCode(), r.headers(), r.body());
  }

  private static String readAll(Socket s) throws IOException {
    ByteArrayOutputStream answer = new ByteArrayOutputStream();
    try (InputStream in = s.getInputStream()) {
      in.transferTo(answer);
    } catch (IOException e) {
      // a reset after the answer: keep what arrived
    }
    return answer.toString(StandardCharsets.ISO_8859_1);
  }
}
