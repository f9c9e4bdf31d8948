package dev.idem.examples.payments.security;

import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** An HTTP answer as a security test sees it: status, headers and body bytes. */
record Reply(int status, HttpHeaders headers, byte[] body) {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  JsonNode json() {
    return JSON.readTree(body);
  }

  String text() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The first value of a header, or null. */
  String header(String name) {
    return headers.firstValue(name).orElse(null);
  }

  /** The problem code of a problem answer. */
  String code() {
    return json().path("code").asString();
  }

  @Override
  public String toString() {
    return status + " " + text();
  }
}
