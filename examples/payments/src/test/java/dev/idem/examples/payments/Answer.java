package dev.idem.examples.payments;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** An HTTP answer as a test sees it: status, headers and body bytes. */
public record Answer(int status, java.net.http.HttpHeaders headers, byte[] body) {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** The body parsed as JSON. */
  public JsonNode json() {
    return JSON.readTree(body);
  }

  /** The body as UTF-8 text. */
  public String text() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The first value of a header, or null. */
  public String header(String name) {
    Optional<String> v = headers.firstValue(name);
    return v.orElse(null);
  }

  /** The problem code of a problem answer. */
  public String code() {
    return json().path("code").asString();
  }

  String contentType() {
    return header("Content-Type");
  }

  @Override
  public String toString() {
    return status + " " + text();
  }
}
