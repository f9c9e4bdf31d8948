package dev.idem.spring.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What {@link IdemMdcFilter} takes from the headers and from a problem document. */
class IdemMdcFilterTest {

  private static String code(String document) {
    byte[] bytes = document.getBytes(StandardCharsets.UTF_8);
    return IdemMdcFilter.code(bytes, bytes.length);
  }

  @Test
  void theKeyIsCutToTheMaximumLengthAndOnlyVisibleAsciiIsKept() {
    assertThat(IdemMdcFilter.key("abc-123")).isEqualTo("abc-123");
    assertThat(IdemMdcFilter.key("x".repeat(400))).hasSize(255);
    assertThat(IdemMdcFilter.key("a\r\nfake line\tb")).isEqualTo("a??fake?line?b");
    assertThat(IdemMdcFilter.key("clé")).isEqualTo("cl?");
    assertThat(IdemMdcFilter.key("")).isNull();
    assertThat(IdemMdcFilter.key(null)).isNull();
  }

  @Test
  void theAttemptIsASmallPositiveNumberOrNothing() {
    assertThat(IdemMdcFilter.attempt("1")).isEqualTo("1");
    assertThat(IdemMdcFilter.attempt("0042")).isEqualTo("42");
    assertThat(IdemMdcFilter.attempt("1000")).isEqualTo("1000");
    assertThat(IdemMdcFilter.attempt("1001")).isNull();
    assertThat(IdemMdcFilter.attempt("0")).isNull();
    assertThat(IdemMdcFilter.attempt("-1")).isNull();
    assertThat(IdemMdcFilter.attempt("2 ")).isNull();
    assertThat(IdemMdcFilter.attempt("99999999999")).isNull();
    assertThat(IdemMdcFilter.attempt(null)).isNull();
  }

  @Test
  void theCodeComesFromTheCodeMemberOrIdemsProblemType() {
    assertThat(code("{\"type\":\"urn:idem:problem:CONFLICT.idempotency.in_progress\",\"title\":\"t\""))
        .as("Idem's type comes first, before the detail").isEqualTo("CONFLICT.idempotency.in_progress");
    assertThat(code("{\"type\":\"about:blank\",\"code\":\"PAYMENT.declined\",\"status\":402}"))
        .isEqualTo("PAYMENT.declined");
    assertThat(code("{\"type\":\"about:blank\",\"title\":\"Bad\"}")).isNull();
    assertThat(code("{\"code\":\"not a code\"}")).isNull();
    assertThat(code("{\"code\":\"" + "A".repeat(150) + "\"}")).isNull();
    assertThat(code("{\"code\":\"VALIDATION.amou")).as("cut in the middle: wait for more").isNull();
  }
}
