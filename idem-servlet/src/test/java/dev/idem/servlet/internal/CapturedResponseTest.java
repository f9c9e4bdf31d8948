package dev.idem.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.servlet.http.Cookie;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How a cookie the handler adds is written as the {@code Set-Cookie} header the capture holds. */
class CapturedResponseTest {
  private static final long NOW = Instant.parse("2026-03-01T10:00:00Z").toEpochMilli();

  @Test
  void aCookieIsItsNameValueAndEveryAttribute() {
    Cookie cookie = new Cookie("order", "ord_1");
    cookie.setDomain("Example.com");
    cookie.setPath("/orders");
    cookie.setMaxAge(3600);
    cookie.setSecure(true);
    cookie.setHttpOnly(true);
    cookie.setAttribute("SameSite", "Strict");
    cookie.setAttribute("Partitioned", "");

    assertThat(CapturedResponse.setCookieHeader(cookie, NOW)).isEqualTo("order=ord_1; Domain=example.com; HttpOnly;"
        + " Max-Age=3600; Expires=Sun, 01 Mar 2026 11:00:00 GMT; Partitioned; Path=/orders; SameSite=Strict; Secure");
  }

  @Test
  void aBareCookieARemovedOneAndANullValue() {
    assertThat(CapturedResponse.setCookieHeader(new Cookie("a", "1"), NOW)).isEqualTo("a=1");
    Cookie removed = new Cookie("a", null);
    removed.setMaxAge(0);

    assertThat(CapturedResponse.setCookieHeader(removed, NOW))
        .isEqualTo("a=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
  }

  @Test
  void aValueOrAttributeThatWouldBreakTheHeaderIsRefused() {
    Cookie injected = new Cookie("a", "1; Domain=evil.example");
    Cookie broken = new Cookie("a", "1");
    broken.setAttribute("SameSite", "Lax\r\nX-Injected: 1");

    assertThatThrownBy(() -> CapturedResponse.setCookieHeader(injected, NOW))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("';' at index 1");
    assertThatThrownBy(() -> CapturedResponse.setCookieHeader(broken, NOW))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SameSite");
  }
}
