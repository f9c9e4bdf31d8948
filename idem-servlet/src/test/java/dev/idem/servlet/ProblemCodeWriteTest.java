package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.protocol.ProblemCode;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProblemCodeWriteTest {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final Map<String, Object> set = new HashMap<>();

  /** A container response that records its status, content type and body. */
  private HttpServletResponse container() {
    ServletOutputStream out = new ServletOutputStream() {
      @Override
      public void write(int b) {
        bytes.write(b);
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(WriteListener listener) {}
    };
    return (HttpServletResponse) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "getOutputStream":
              return out;
            case "setStatus":
            case "setContentType":
            case "setContentLength":
              set.put(method.getName(), args[0]);
              return null;
            default:
              throw new UnsupportedOperationException(method.getName());
          }
        });
  }

  /** A wrapper that listens for problems. */
  private static final class Listening extends HttpServletResponseWrapper implements ProblemListener {
    final List<String> codes = new ArrayList<>();

    Listening(HttpServletResponse response) {
      super(response);
    }

    @Override
    public void problemWritten(String code) {
      codes.add(code);
    }
  }

  @Test
  void aProblemOfACodeWritesItsCodeStatusTitleAndRetryable() throws Exception {
    Problem.of(ProblemCode.IN_PROGRESS).withDetail("later").write(container());

    assertThat(set).containsEntry("setStatus", 409).containsEntry("setContentType", Problem.MEDIA_TYPE);
    assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"urn:idem:problem:"
        + "CONFLICT.idempotency.in_progress\",\"title\":\"A request with this Idempotency-Key is in progress\","
        + "\"status\":409,\"detail\":\"later\",\"code\":\"CONFLICT.idempotency.in_progress\",\"retryable\":true}");
  }

  @Test
  void anApplicationsCodeAndTheOverrides() {
    ProblemCode declined = ProblemCode.of("PAYMENT.declined", 402, false, "Payment declined");
    Problem problem = Problem.of(declined);
    assertThat(problem.status()).isEqualTo(402);
    assertThat(problem.code()).isEqualTo("PAYMENT.declined");
    assertThat(problem.title()).isEqualTo("Payment declined");
    assertThat(problem.retryable()).isFalse();
    Problem conflict = Problem.of(ProblemCode.PAYLOAD_MISMATCH).withStatus(409).withTitle("Reused");
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(conflict.title()).isEqualTo("Reused");
    assertThat(conflict.code()).isEqualTo(ProblemCode.PAYLOAD_MISMATCH.code());
  }

  @Test
  void writeTellsEveryListeningWrapperInTheChain() throws Exception {
    Listening inner = new Listening(container());
    HttpServletResponseWrapper middle = new HttpServletResponseWrapper(inner);
    Listening outer = new Listening(middle);

    Problem.of(ProblemCode.RETRY_BUDGET_EXHAUSTED).write(outer);

    assertThat(outer.codes).containsExactly("TRANSIENT.retry_budget_exhausted");
    assertThat(inner.codes).containsExactly("TRANSIENT.retry_budget_exhausted");
    assertThat(set).containsEntry("setStatus", 503);
  }

  @Test
  void announceWithoutWriting() {
    Listening listening = new Listening(container());
    Problem.announce(new HttpServletResponseWrapper(listening), "APP.custom");
    assertThat(listening.codes).containsExactly("APP.custom");
    assertThat(bytes.size()).isZero();
  }
}
