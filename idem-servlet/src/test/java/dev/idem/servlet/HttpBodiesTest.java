package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link HttpBodies#withBody}: the request with its body read already serves that body and a form's parameters. */
class HttpBodiesTest {

  @Test
  void aRequestWithItsBodyReadServesTheBytesTheReaderAndTheFormsParameters() throws IOException {
    HttpServletRequest original = request(Map.of("getContentType", "application/x-www-form-urlencoded; charset=UTF-8",
        "getQueryString", "a=1", "getCharacterEncoding", "UTF-8"));
    byte[] body = "a=2&b=x%20y&c=caf%C3%A9".getBytes(StandardCharsets.US_ASCII);

    HttpServletRequest read = HttpBodies.withBody(original, body);

    assertThat(read.getInputStream().readAllBytes()).isEqualTo(body);
    assertThat(read.getReader().readLine()).isEqualTo("a=2&b=x%20y&c=caf%C3%A9");
    assertThat(read.getParameterValues("a")).as("the query string's first").containsExactly("1", "2");
    assertThat(read.getParameter("b")).isEqualTo("x y");
    assertThat(read.getParameter("c")).isEqualTo("café");
    assertThat(read.getParameterMap()).containsOnlyKeys("a", "b", "c");
  }

  @Test
  void aBodyThatIsNotAFormLeavesTheParametersToTheContainer() throws IOException {
    Map<String, String[]> query = Map.of("q", new String[] {"v"});
    HttpServletRequest original = request(Map.of("getContentType", "application/json", "getParameterMap", query));

    HttpServletRequest read = HttpBodies.withBody(original, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));

    assertThat(read.getParameterMap()).isSameAs(query);
    assertThat(new String(read.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
  }

  /** A request that answers {@code answers} by method name, and null to anything else. */
  private static HttpServletRequest request(Map<String, Object> answers) {
    return (HttpServletRequest) Proxy.newProxyInstance(HttpBodiesTest.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> answers.get(method.getName()));
  }
}
