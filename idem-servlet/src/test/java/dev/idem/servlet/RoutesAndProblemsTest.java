package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.InvalidKeyException;
import dev.idem.servlet.internal.PathTemplate;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Route templates, key parsing and problem documents, without a server. */
class RoutesAndProblemsTest {

  @Test
  void templateMatchesLiteralAndVariableSegmentsExactly() {
    PathTemplate t = PathTemplate.parse("/accounts/{id}/payments");

    assertThat(t.matches("/accounts/a1/payments")).isTrue();
    assertThat(t.matches("/accounts/a1/payments/")).as("a trailing slash is another path").isFalse();
    assertThat(t.matches("/accounts//payments")).isFalse();
    assertThat(t.matches("/accounts/a1/Payments")).isFalse();
    assertThat(t.matches("/accounts/a1/payments/x")).isFalse();
    assertThat(t.matches("/accounts/a1")).isFalse();
    assertThat(PathTemplate.parse("/").matches("/")).isTrue();
  }

  @Test
  void unsupportedTemplatesAreRefusedNamingTheTemplate() {
    assertThatThrownBy(() -> PathTemplate.parse("payments")).hasMessageContaining("must start with '/'");
    assertThatThrownBy(() -> PathTemplate.parse("/a/**")).hasMessageContaining("wildcard");
    assertThatThrownBy(() -> PathTemplate.parse("/a/x{id}")).hasMessageContaining("whole segment");
    assertThatThrownBy(() -> PathTemplate.parse("/a//b")).hasMessageContaining("empty segment");
    assertThatThrownBy(() -> PathTemplate.parse("/a/")).hasMessageContaining("trailing slash");
    assertThatThrownBy(() -> PathTemplate.parse("/a/{*rest}")).hasMessageContaining("whole segment");
    assertThatThrownBy(() -> PathTemplate.parse("/a/{id:[}")).hasMessageContaining("invalid regular expression");
  }

  @Test
  void variableWithARegularExpressionMatchesOnlyWhatItAllows() {
    PathTemplate t = PathTemplate.parse("/orders/{id:[0-9]+}/cancel");

    assertThat(t.matches("/orders/42/cancel")).isTrue();
    assertThat(t.matches("/orders/abc/cancel")).isFalse();
  }

  @Test
  void safeMethodsCannotBeIdempotentRoutes() {
    assertThatThrownBy(() -> IdempotentRoute.atomic("GET", "/x")).hasMessageContaining("safe method");
    assertThatThrownBy(() -> IdempotentRoute.atomic("PO ST", "/x")).hasMessageContaining("method token");
    assertThat(IdempotentRoute.phased("post", "/payments").operation().name()).isEqualTo("POST /payments");
  }

  @Test
  void moreLiteralRouteWinsOverAVariableOne() throws Exception {
    IdempotentRoute literal = IdempotentRoute.atomic("POST", "/orders/batch");
    IdempotentRoute variable = IdempotentRoute.atomic("POST", "/orders/{id}");

    assertThat(literal.specificity()).isGreaterThan(variable.specificity());
  }

  @Test
  void keyIsABareTokenOrAStructuredFieldString() {
    assertThat(IdempotencyFilter.parseKey(List.of("abc-1")).value()).isEqualTo("abc-1");
    assertThat(IdempotencyFilter.parseKey(List.of("\"abc-1\"")).value()).isEqualTo("abc-1");
    assertThat(IdempotencyFilter.parseKey(List.of("\"a\\\"b\"")).value()).isEqualTo("a\"b");
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("a", "b"))).isInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("\"\""))).isInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("\"a\"b\""))).isInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("\"K7\";p=1")))
        .isInstanceOf(InvalidKeyException.class).hasMessageContaining("parameters are not accepted");
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("K7;p=1")))
        .isInstanceOf(InvalidKeyException.class).hasMessageContaining("parameters are not accepted");
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("\"K"))).hasMessageContaining("never ends");
    assertThatThrownBy(() -> IdempotencyFilter.parseKey(List.of("\"K\\a\""))).hasMessageContaining("escape");
  }

  @Test
  void jsonStringQuotesAndEscapes() {
    assertThat(HttpBodies.jsonString("msg_1")).isEqualTo("\"msg_1\"");
    assertThat(HttpBodies.jsonString("a\"b\\c\n\u0001")).isEqualTo("\"a\\\"b\\\\c\\n\\u0001\"");
  }

  @Test
  void problemDocumentEscapesTextAndCarriesCodeAndRetryable() {
    Problem p = Problem.of(409, "CONFLICT.idempotency.in_progress", "In \"progress\"")
        .withDetail("line\nbreak \u0001").withRetryable(true).with("fields", List.of("a", "b\\c"));

    String json = new String(p.toJson(), StandardCharsets.UTF_8);

    assertThat(json).isEqualTo("{\"type\":\"urn:idem:problem:CONFLICT.idempotency.in_progress\","
        + "\"title\":\"In \\\"progress\\\"\",\"status\":409,\"detail\":\"line\\nbreak \\u0001\","
        + "\"code\":\"CONFLICT.idempotency.in_progress\",\"retryable\":true,\"fields\":[\"a\",\"b\\\\c\"]}");
  }

  @Test
  void aCodeBuiltFromAClientsTextCarriesNoCharacterOutsideTheProblemCodeAlphabet() {
    Problem forged = Problem.of(400, "VALIDATION.a\r\nINFO forged\u001b[31m\u00e9", "Invalid request");
    Problem plain = Problem.of(400, "VALIDATION.amount_1", "Invalid request");

    assertThat(forged.code()).isEqualTo("VALIDATION.a__INFO_forged__31m_");
    assertThat(new String(forged.toJson(), StandardCharsets.UTF_8))
        .contains("\"code\":\"VALIDATION.a__INFO_forged__31m_\"");
    assertThat(plain.code()).isEqualTo("VALIDATION.amount_1");
  }

  @Test
  void problemRefusesReservedMembersAndNonErrorStatuses() {
    assertThatThrownBy(() -> Problem.of(200, "X", "x")).hasMessageContaining("400..599");
    assertThatThrownBy(() -> Problem.of(400, "X", "x").with("code", "y")).hasMessageContaining("reserved");
  }

  @Test
  void filterBuilderValidatesEagerly() {
    dev.idem.core.Idem idem = dev.idem.core.Idem.builder()
        .store(new dev.idem.core.memory.InMemoryIdempotencyStore()).build();

    assertThatThrownBy(() -> IdempotencyFilter.builder(idem).build()).hasMessageContaining("has no routes");
    assertThatThrownBy(() -> IdempotencyFilter.builder(idem).mismatchStatus(400))
        .hasMessageContaining("422 or 409, got 400");
    assertThatThrownBy(() -> IdempotencyFilter.builder(idem).maxRequestBytes(0)).hasMessageContaining("positive");
    assertThatThrownBy(() -> IdempotencyFilter.builder(idem).route(IdempotentRoute.atomic("POST", "/a"))
        .route(IdempotentRoute.phased("POST", "/a")).build()).hasMessageContaining("configured twice");
  }
}
