package dev.idem.examples.payments.web;

import dev.idem.servlet.Problem;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.Map;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Refuses request parameters the service cannot take, before any other filter of the service runs (authentication,
 * idempotency) and so before any work: a query string with an escape that is not {@code %} and two hexadecimal digits,
 * with bytes that are not UTF-8 ({@code %c0}, {@code %ed%a0%80}) or with a NUL ({@code %00}) gets 400
 * {@code VALIDATION.query}. Parameters read from a form body are checked when a handler first asks for them: one that
 * the container cannot decode, or that holds text the databases cannot store ({@link StorableText}), gets 400
 * {@code VALIDATION.body}. Runs right after Spring's character encoding filter. Thread-safe.
 */
@Component
@Order(RequestTextFilter.ORDER)
public class RequestTextFilter extends HttpFilter {
  /** After Spring's character encoding and observation filters, before every filter of the service and of Idem. */
  public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;
  private static final long serialVersionUID = 1L;

  @Override
  protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    String wrong = queryProblem(request.getQueryString());
    if (wrong != null) {
      Problem.of(PaymentsProblems.INVALID_QUERY).withDetail(wrong).write(response);
      return;
    }
    chain.doFilter(new CheckedParameters(request), response);
  }

  /**
   * What is wrong with a raw (still percent-encoded) query string, or null when it is well formed: every {@code %}
   * starts an escape of two hexadecimal digits, the decoded bytes are UTF-8, and the text holds nothing the databases
   * cannot store. Never quotes the query itself.
   */
  static String queryProblem(String query) {
    if (query == null || query.isEmpty()) {
      return null;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(query.length());
    for (int i = 0; i < query.length(); i++) {
      char c = query.charAt(i);
      if (c == '%') {
        int high = i + 1 < query.length() ? hex(query.charAt(i + 1)) : -1;
        int low = i + 2 < query.length() ? hex(query.charAt(i + 2)) : -1;
        if (high < 0 || low < 0) {
          return "the query string holds an escape at position " + i + " that is not '%' and two hexadecimal"
              + " digits; percent-encode the parameters as UTF-8";
        }
        bytes.write(high << 4 | low);
        i += 2;
      } else {
        bytes.write(c > 0xFF ? '?' : c);
      }
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
    } catch (CharacterCodingException e) {
      return "the query string's escapes do not decode as UTF-8; percent-encode the parameters as UTF-8";
    }
    int at = StorableText.firstUnstorable(text);
    return at < 0 ? null : "the decoded query string holds " + StorableText.describe(text, at);
  }

  private static int hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10
        : -1;
  }

  /**
   * The request with its parameters checked once, when first asked for: the query string is checked already, so a
   * parameter that fails came from a form body.
   */
  private static final class CheckedParameters extends HttpServletRequestWrapper {
    private boolean checked;

    CheckedParameters(HttpServletRequest request) {
      super(request);
    }

    private void check() {
      if (checked) {
        return;
      }
      Map<String, String[]> parameters;
      try {
        parameters = super.getParameterMap();
      } catch (IllegalStateException | IllegalArgumentException e) {
        // Tomcat's InvalidParameterException (an IllegalStateException): an escape or bytes it cannot decode
        throw new ApiProblem(Problem.of(PaymentsProblems.UNREADABLE_BODY)
            .withDetail("the form body's parameters could not be decoded; percent-encode them as UTF-8"));
      }
      for (Map.Entry<String, String[]> p : parameters.entrySet()) {
        refuseUnstorable(p.getKey(), "a parameter name");
        for (String value : p.getValue()) {
          refuseUnstorable(value, "the parameter " + p.getKey());
        }
      }
      checked = true;
    }

    private static void refuseUnstorable(String text, String what) {
      int at = text == null ? -1 : StorableText.firstUnstorable(text);
      if (at >= 0) {
        throw new ApiProblem(Problem.of(PaymentsProblems.UNREADABLE_BODY)
            .withDetail(what + " of the form body holds " + StorableText.describe(text, at)));
      }
    }

    @Override
    public String getParameter(String name) {
      check();
      return super.getParameter(name);
    }

    @Override
    public Map<String, String[]> getParameterMap() {
      check();
      return super.getParameterMap();
    }

    @Override
    public Enumeration<String> getParameterNames() {
      check();
      return super.getParameterNames();
    }

    @Override
    public String[] getParameterValues(String name) {
      check();
      return super.getParameterValues(name);
    }
  }
}
