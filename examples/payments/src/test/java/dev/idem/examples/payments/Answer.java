package dev.idem.examples.payments;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** An HTTP answer as a test sees it: status, headers and body bytes. */
record Answer(int status, java.net.http.HttpHeaders headers, byte[] body) {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  JsonNode json() {
    return JSON.readTree(body);
  }

  String text() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The first value of a header, or null. */
  String header(String name) {
    Optional<String> v = headers.firstValue(name);
    return v.orElse(null);
  }

  /** The problem code of a problem answer. */
  String code() {
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
