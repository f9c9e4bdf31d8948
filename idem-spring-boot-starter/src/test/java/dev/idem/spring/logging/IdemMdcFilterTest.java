package dev.idem.spring.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** What {@link IdemMdcFilter} takes from the headers and from a problem document. */
class IdemMdcFilterTest {

  private static String code(String document) {
    byte[] bytes = document.getBytes(StandardCharsets.UTF_8);
    return IdemMdcFilter.code(bytes, bytes.length);
  }

  @Test
  void theKeyIsCutToTheMaximumLengthAndOnlyVisibleAsciiIsKept() {
    assertThat(IdemMdcFilter.key("abc-123")).isEqualTo("abc-123");
    assertThat(IdemMdcFilter.key("\"abc-123\"")).as("the quoted form logs as the same key").isEqualTo("abc-123");
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
    assertThat(IdemMdcFilter.attempt(" 2\t")).as("the same reading as the span's (AttemptHeader)").isEqualTo("2");
    assertThat(IdemMdcFilter.attempt("99999999999")).isNull();
    assertThat(IdemMdcFilter.attempt(null)).isNull();
  }

  @Test
  void aFrameChangesNothingFromAnotherThreadNorOnceClosed() throws Exception {
    MDC.clear();
    IdemMdc.Frame frame = IdemMdc.set(IdemMdc.IDEMPOTENCY_KEY, "k-1", IdemMdc.ERROR_CODE, null);
    AtomicReference<String> seenElsewhere = new AtomicReference<>("unset");
    Thread pooled = new Thread(() -> {
      frame.put(IdemMdc.ERROR_CODE, "CONFLICT.late");
      frame.close();
      seenElsewhere.set(MDC.get(IdemMdc.ERROR_CODE));
    });

    pooled.start();
    pooled.join();
    String keyWhileOpen = MDC.get(IdemMdc.IDEMPOTENCY_KEY);
    frame.close();
    frame.put(IdemMdc.ERROR_CODE, "CONFLICT.after_close");
    frame.close();

    assertThat(seenElsewhere.get()).as("another thread's MDC").isNull();
    assertThat(keyWhileOpen).as("closing from another thread restores nothing").isEqualTo("k-1");
    assertThat(MDC.getCopyOfContextMap()).as("after close").isNullOrEmpty();
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
