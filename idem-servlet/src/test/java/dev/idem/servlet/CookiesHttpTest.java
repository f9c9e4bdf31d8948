package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.Filter;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Cookies on idempotent routes. The handler's cookies ({@code addCookie} as well as {@code Set-Cookie} headers) are
 * held with the rest of its answer: they go out with the answer it becomes, never with an answer that replaces it
 * (a duplicate first attempt that rolls back and replays the first answer), and never from a kept answer. They are
 * added to what a filter before the idempotency filter set on the real response (a session cookie here), not in its
 * place. On H2 with Jetty and on PostgreSQL with Tomcat.
 */
class CookiesHttpTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  /** What the filter before the idempotency filter sets on every answer, as a session filter would. */
  private static final String SESSION_COOKIE = "JSESSIONID=s-1; Path=/";

  private static Filter sessionCookie() {
    return (req, res, chain) -> {
      ((HttpServletResponse) res).addHeader("Set-Cookie", SESSION_COOKIE);
      chain.doFilter(req, res);
    };
  }

  private static HttpResponse<String> post(TestService service, String key, int attempt) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(service.url("/orders")))
        .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer alice")
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .header("Idempotency-Attempt", Integer.toString(attempt))
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}", StandardCharsets.UTF_8)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String orderId(HttpResponse<String> answer) {
    String location = answer.headers().firstValue("Location").orElseThrow();
    return location.substring("/orders/".length());
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void theFirstAnswerCarriesEveryCookieAndAReplayNoneOfTheHandlers(String db, String container) throws Exception {
    try (TestService service = new TestService(db, container, List.of(sessionCookie()), b -> b)) {
      String key = "cookies-" + UUID.randomUUID();

      HttpResponse<String> first = post(service, key, 2);
      HttpResponse<String> replay = post(service, key, 2);

      assertThat(first.statusCode()).isEqualTo(201);
      String id = orderId(first);
      assertThat(first.headers().allValues("Set-Cookie")).containsExactly(SESSION_COOKIE, "session=secret-" + id,
          "order=" + id + "; HttpOnly; Path=/orders; SameSite=Lax");
      assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(replay.headers().allValues("Set-Cookie")).as("a kept answer has no cookie")
          .containsExactly(SESSION_COOKIE);
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void aDuplicateFirstAttemptThatRollsBackSendsNoneOfItsHandlersCookies(String db, String container)
      throws Exception {
    try (TestService service = new TestService(db, container, List.of(sessionCookie()), b -> b)) {
      String key = "cookies-duplicate-" + UUID.randomUUID();

      HttpResponse<String> first = post(service, key, 1);
      HttpResponse<String> duplicate = post(service, key, 1);

      AtomicInteger runs = TestService.ORDER_RUNS.get(key);
      assertThat(runs).as("the duplicate ran the handler, which added its cookies").hasValue(2);
      assertThat(duplicate.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(duplicate.body()).isEqualTo(first.body());
      assertThat(duplicate.headers().allValues("Set-Cookie")).containsExactly(SESSION_COOKIE);
    }
  }
}
