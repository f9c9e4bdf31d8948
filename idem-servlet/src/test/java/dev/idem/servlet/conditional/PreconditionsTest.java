package dev.idem.servlet.conditional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.servlet.conditional.Preconditions.Outcome;
import dev.idem.servlet.conditional.Preconditions.Requirement;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PreconditionsTest {

  /**
   * RFC 9110 section 13.2.2 as a table. "-" is an absent header or resource; the current representation's tag is
   * {@code "v2"} when it exists.
   */
  @ParameterizedTest(name = "{0} If-Match: {1} If-None-Match: {2} exists: {3} requires {4} -> {5}")
  @CsvSource(delimiter = '|', value = {
      // method | If-Match           | If-None-Match | exists | requirement | outcome
      "PATCH    | \"v2\"             | -             | true   | IF_MATCH    | PROCEED",
      "PATCH    | \"v1\"             | -             | true   | IF_MATCH    | FAILED",
      "PATCH    | W/\"v2\"           | -             | true   | IF_MATCH    | FAILED",
      "PATCH    | \"v1\", \"v2\"     | -             | true   | IF_MATCH    | PROCEED",
      "PATCH    | *                  | -             | true   | IF_MATCH    | PROCEED",
      "PATCH    | *                  | -             | false  | IF_MATCH    | FAILED",
      "PATCH    | \"v2\"             | -             | false  | IF_MATCH    | FAILED",
      "PATCH    | -                  | -             | true   | IF_MATCH    | REQUIRED",
      "PATCH    | -                  | *             | true   | IF_MATCH    | REQUIRED",
      "PATCH    | v2                 | -             | true   | IF_MATCH    | MALFORMED",
      "PATCH    | -                  | -             | true   | NONE        | PROCEED",
      "PUT      | -                  | *             | false  | ANY         | PROCEED",
      "PUT      | -                  | *             | true   | ANY         | FAILED",
      "PUT      | -                  | \"v2\"        | true   | ANY         | REQUIRED",
      "PUT      | -                  | W/\"v2\"      | true   | ANY         | REQUIRED",
      "PUT      | -                  | \"v1\"        | true   | ANY         | REQUIRED",
      "PUT      | -                  | -             | false  | ANY         | REQUIRED",
      "PUT      | \"v2\"             | *             | true   | ANY         | FAILED",
      "PUT      | \"v1\"             | *             | true   | ANY         | FAILED",
      "PUT      | -                  | \"a\" b       | false  | ANY         | MALFORMED",
      "GET      | -                  | \"v2\"        | true   | NONE        | NOT_MODIFIED",
      "GET      | -                  | W/\"v2\"      | true   | NONE        | NOT_MODIFIED",
      "HEAD     | -                  | \"v1\", *     | true   | NONE        | PROCEED",
      "GET      | -                  | *             | true   | NONE        | NOT_MODIFIED",
      "GET      | -                  | \"v1\"        | true   | NONE        | PROCEED",
      "GET      | -                  | \"v2\"        | false  | NONE        | PROCEED",
      "GET      | \"v1\"             | \"v2\"        | true   | NONE        | FAILED",
      "GET      | -                  | garbage       | true   | NONE        | PROCEED",
      "DELETE   | \"v2\"             | \"v2\"        | true   | NONE        | FAILED",
  })
  void evaluationFollowsRfc9110(String method, String ifMatch, String ifNoneMatch, boolean exists,
      Requirement requirement, Outcome expected) {
    Preconditions pre = Preconditions.of(method, header(ifMatch), header(ifNoneMatch));

    Preconditions.Result result = pre.evaluate(exists ? ETag.ofVersion(2) : null, requirement);

    assertThat(result.outcome()).as(result.toString()).isEqualTo(expected);
    assertThat(result.proceed()).isEqualTo(expected == Outcome.PROCEED);
  }

  @Test
  void problemsCarryTheTaxonomyCodesAndAreNotRetryable() {
    Preconditions.Result failed = Preconditions.of("PATCH", List.of("\"v1\""), List.of())
        .evaluate(ETag.ofVersion(2), Requirement.IF_MATCH);
    Preconditions.Result required = Preconditions.of("PATCH", List.of(), List.of()).check(Requirement.IF_MATCH);
    Preconditions.Result malformed = Preconditions.of("PATCH", List.of("nope"), List.of()).check(Requirement.NONE);

    assertThat(failed.problem().orElseThrow().status()).isEqualTo(412);
    assertThat(failed.problem().orElseThrow().code()).isEqualTo("CONFLICT.precondition_failed");
    assertThat(failed.detail()).contains("\"v1\"").contains("\"v2\"");
    assertThat(required.problem().orElseThrow().status()).isEqualTo(428);
    assertThat(required.problem().orElseThrow().code()).isEqualTo("VALIDATION.precondition_required");
    assertThat(malformed.problem().orElseThrow().code()).isEqualTo("VALIDATION.precondition_malformed");
    for (Preconditions.Result r : List.of(failed, required, malformed)) {
      assertThat(r.problem().orElseThrow().retryable()).isFalse();
    }
  }

  @Test
  void requireWrites412WithTheCurrentETagAndProblemJson() throws Exception {
    FakeResponse response = new FakeResponse();

    boolean proceed = Preconditions.require(request("PUT", Map.of("If-Match", List.of("\"v1\""))),
        response.proxy(), ETag.ofVersion(3), Requirement.ANY);

    assertThat(proceed).isFalse();
    assertThat(response.status).isEqualTo(412);
    assertThat(response.headers).containsEntry("ETag", "\"v3\"").containsEntry("Content-Type",
        "application/problem+json");
    assertThat(response.body.toString(StandardCharsets.UTF_8)).contains("\"code\":\"CONFLICT.precondition_failed\"")
        .contains("\"retryable\":false");
  }

  @Test
  void requireWrites304WithoutABodyForACurrentCachedCopy() throws Exception {
    FakeResponse response = new FakeResponse();

    boolean proceed = Preconditions.require(request("GET", Map.of("If-None-Match", List.of("W/\"v3\""))),
        response.proxy(), ETag.ofVersion(3), Requirement.NONE);

    assertThat(proceed).isFalse();
    assertThat(response.status).isEqualTo(304);
    assertThat(response.headers).containsEntry("ETag", "\"v3\"");
    assertThat(response.body.size()).isZero();
  }

  @Test
  void requireLetsAMatchingRequestThroughAndWritesNothing() throws Exception {
    FakeResponse response = new FakeResponse();

    boolean proceed = Preconditions.require(request("PATCH", Map.of("If-Match", List.of("\"v3\""))),
        response.proxy(), ETag.ofVersion(3), Requirement.IF_MATCH);

    assertThat(proceed).isTrue();
    assertThat(response.status).isZero();
    assertThat(response.headers).isEmpty();
    assertThatThrownBy(() -> Preconditions.of("GET", List.of(), List.of()).evaluate(null).write(response.proxy(), null))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aVersionConditionKeepsStrongVersionsAndDropsExcludedOnes() {
    VersionCondition strong = Preconditions.of("PATCH", List.of("\"v3\", W/\"v4\", \"etc\""), List.of())
        .versionCondition();
    VersionCondition several = Preconditions.of("PUT", List.of("\"v3\", \"v5\", \"v6\""), List.of("W/\"v6\""))
        .versionCondition();
    VersionCondition any = Preconditions.of("PUT", List.of("*"), List.of()).versionCondition();
    VersionCondition weakOnly = Preconditions.of("PUT", List.of("W/\"v3\""), List.of()).versionCondition();
    VersionCondition create = Preconditions.of("PUT", List.of(), List.of("*")).versionCondition();
    assertThat(strong.sql("version")).isEqualTo(" AND version = ?");
    assertThat(strong.matches(3)).isTrue();
    assertThat(strong.matches(4)).isFalse();
    assertThat(several.sql("version")).isEqualTo(" AND version IN (?, ?) AND version <> ?");
    assertThat(several.parameters()).containsExactly(3L, 5L, 6L);
    assertThat(strong.parameters()).containsExactly(3L);
    assertThat(any.sql("version")).isEmpty();
    assertThat(any.parameters()).isEmpty();
    assertThat(any.matches(99)).isTrue();
    assertThat(weakOnly.updatable()).isFalse();
    assertThatThrownBy(() -> weakOnly.sql("version")).isInstanceOf(IllegalStateException.class);
    assertThat(create.createOnly()).isTrue();
    assertThat(create.updatable()).isFalse();
    assertThat(strong.createOnly()).isFalse();
  }

  private static List<String> header(String value) {
    return value.equals("-") ? List.of() : List.of(value);
  }

  private static HttpServletRequest request(String method, Map<String, List<String>> headers) {
    return (HttpServletRequest) Proxy.newProxyInstance(PreconditionsTest.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (p, m, args) -> {
          switch (m.getName()) {
            case "getMethod":
              return method;
            case "getHeaders":
              return Collections.enumeration(headers.getOrDefault((String) args[0], List.of()));
            default:
              throw new UnsupportedOperationException(m.getName());
          }
        });
  }

  /** The parts of a response that {@link Preconditions} writes. */
  private static final class FakeResponse {
    int status;
    final Map<String, String> headers = new HashMap<>();
    final ByteArrayOutputStream body = new ByteArrayOutputStream();

    HttpServletResponse proxy() {
      ServletOutputStream out = new ServletOutputStream() {
        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {}

        @Override
        public void write(int b) {
          body.write(b);
        }
      };
      return (HttpServletResponse) Proxy.newProxyInstance(getClass().getClassLoader(),
          new Class<?>[] {HttpServletResponse.class}, (p, m, args) -> {
            switch (m.getName()) {
              case "setStatus":
                status = (Integer) args[0];
                return null;
              case "setHeader":
                headers.put((String) args[0], (String) args[1]);
                return null;
              case "setContentType":
                headers.put("Content-Type", (String) args[0]);
                return null;
              case "setContentLength":
                return null;
              case "getOutputStream":
                return out;
              default:
                throw new UnsupportedOperationException(m.getName());
            }
          });
    }
  }
}
