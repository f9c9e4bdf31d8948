package dev.idem.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.protocol.ProblemCode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The OpenAPI fragment names every problem code with its status and retryable, and the configured mismatch status. */
class IdemOpenApiTest {

  private static JsonNode fragment(int mismatchStatus) {
    return JsonMapper.builder().build().readTree(new IdemOpenApi(mismatchStatus).json());
  }

  @Test
  void everyProblemCodeIsAResponseWithItsStatusAndRetryableAndInTheSchemasEnum() {
    JsonNode fragment = fragment(422);
    List<ProblemCode> codes = IdemOpenApi.problemCodes();
    List<String> inEnum = new ArrayList<>();
    fragment.at("/components/schemas/Problem/properties/code/enum").forEach(n -> inEnum.add(n.asString()));

    assertThat(codes).hasSizeGreaterThan(20).contains(ProblemCode.KEY_EXPIRED, ProblemCode.PAYLOAD_MISMATCH);
    assertThat(fragment.at("/components/responses").size()).isEqualTo(codes.size());
    for (ProblemCode code : codes) {
      JsonNode response = fragment.at("/components/responses").path(code.code());
      assertThat(response.path("x-status").asInt()).as(code.code()).isEqualTo(code.status());
      assertThat(response.path("x-retryable").asBoolean()).as(code.code()).isEqualTo(code.retryable());
      assertThat(response.at("/content/application~1problem+json/example/title").asString()).isEqualTo(code.title());
    }
    assertThat(inEnum).containsExactlyElementsOf(codes.stream().map(ProblemCode::code).toList());
    assertThat(fragment.at("/components/headers/Idempotency-Status/schema/enum").toString())
        .isEqualTo("[\"stored\",\"replayed\"]");
  }

  @Test
  void aPayloadMismatchCarriesTheConfiguredStatus() {
    JsonNode mismatch = fragment(409).at("/components/responses").path("CONFLICT.idempotency.payload_mismatch");

    assertThat(mismatch.path("x-status").asInt()).isEqualTo(409);
    assertThat(mismatch.at("/content/application~1problem+json/example/status").asInt()).isEqualTo(409);
  }
}
