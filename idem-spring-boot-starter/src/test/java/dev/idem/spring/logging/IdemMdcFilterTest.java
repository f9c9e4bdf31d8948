package dev.idem.spring.logging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** What {@link IdemMdcFilter} takes from the headers and from the problems written through it. */
class IdemMdcFilterTest {
  private static final String NOT_JSON = "this is not a problem document at all";

  /** A POST with a key. */
  private static HttpServletRequest post() {
    Map<String, String> headers = Map.of("Idempotency-Key", "k-1");
    return (HttpServletRequest) Proxy.newProxyInstance(IdemMdcFilterTest.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "getHeader":
              return headers.get((String) args[0]);
            case "getMethod":
              return "POST";
            case "getRequestURI":
              return "/notes";
            case "isAsyncStarted":
              return false;
            default:
              throw new UnsupportedOperationException(method.getName());
          }
        });
  }

  /** A container response that keeps its body. */
  private static HttpServletResponse response(ByteArrayOutputStream body) {
    ServletOutputStream out = new ServletOutputStream() {
      @Override
      public void write(int b) {
        body.write(b);
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(WriteListener listener) {}
    };
    return (HttpServletResponse) Proxy.newProxyInstance(IdemMdcFilterTest.class.getClassLoader(),
        new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "getOutputStream":
              return out;
            case "getStatus":
              return 409;
            case "getContentType":
              return Problem.MEDIA_TYPE;
            default:
              return null;
          }
        });
  }

  /** The MDC's error code right after the chain wrote its answer. */
  private static String errorCodeAfter(FilterChain chain) throws Exception {
    AtomicReference<String> seen = new AtomicReference<>();
    new IdemMdcFilter().doFilter(post(), response(new ByteArrayOutputStream()), (req, res) -> {
      chain.doFilter(req, res);
      seen.set(MDC.get(IdemMdc.ERROR_CODE));
    });
    return seen.get();
  }

  @Test
  void theErrorCodeComesFromTheNotificationNotFromTheBytes() throws Exception {
    assertThat(errorCodeAfter((req, res) -> {
      res.setContentType(Problem.MEDIA_TYPE);
      Problem.announce(res, "APP.custom");
      res.getOutputStream().write(NOT_JSON.getBytes(StandardCharsets.UTF_8));
    })).isEqualTo("APP.custom");
    assertThat(errorCodeAfter((req, res) -> {
      res.setContentType(Problem.MEDIA_TYPE);
      res.getOutputStream().write(Problem.of(ProblemCode.IN_PROGRESS).toJson());
    })).as("a problem's bytes alone are not read").isNull();
    assertThat(errorCodeAfter((req, res) -> Problem.of(ProblemCode.IN_PROGRESS).write((HttpServletResponse) res)))
        .isEqualTo("CONFLICT.idempotency.in_progress");
    assertThat(errorCodeAfter((req, res) -> {
      Problem.of(ProblemCode.IN_PROGRESS).write((HttpServletResponse) res);
      res.reset();
    })).as("a reset forgets it").isNull();
    assertThat(MDC.getCopyOfContextMap()).as("after the request").isNullOrEmpty();
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
}
