package dev.idem.console;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The host the allow-list checks: the {@code Host} header's, without its port, whatever forwarded headers say. */
class RequestedHostTest {

  @Test
  void theHostHeaderWithoutItsPort() {
    assertThat(ConsoleServlet.requestedHost("LocalHost:8080")).isEqualTo("localhost");
    assertThat(ConsoleServlet.requestedHost("127.0.0.1")).isEqualTo("127.0.0.1");
    assertThat(ConsoleServlet.requestedHost(" example.test:443 ")).isEqualTo("example.test");
  }

  @Test
  void anIpv6AddressKeepsItsBrackets() {
    assertThat(ConsoleServlet.requestedHost("[::1]:8080")).isEqualTo("[::1]");
    assertThat(ConsoleServlet.requestedHost("[::1]")).isEqualTo("[::1]");
    assertThat(ConsoleServlet.requestedHost("::1")).isEqualTo("[::1]");
  }

  @Test
  void noHostHeaderIsNoHost() {
    assertThat(ConsoleServlet.requestedHost(null)).isEmpty();
  }
}
