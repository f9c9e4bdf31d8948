package dev.idem.spring.console;

import dev.idem.console.ConsoleServlet;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code idem.console.*} properties. Validated once at startup by {@link #validate()}. */
@ConfigurationProperties(prefix = "idem.console")
public class IdemConsoleProperties {
  private static final Pattern PATH = Pattern.compile("(/[A-Za-z0-9._~-]+)+");

  /**
   * Mount the operator console. It refuses everyone until the application defines a {@code ConsoleAuthorizer} bean.
   */
  private boolean enabled = true;
  /** Where the console is mounted: its page at {@code <path>/}, its API under {@code <path>/api/}. */
  private String path = "/idem/console";
  /**
   * The host names (as the Host header carries them, without the port) the console answers for; others get 403,
   * which defeats DNS rebinding. {@code *} allows any (behind a proxy that checks the host). IPv6 addresses in
   * brackets.
   */
  private List<String> allowedHosts = new ArrayList<>(ConsoleServlet.LOOPBACK_HOSTS);
  /**
   * The public origins of the console's page ({@code https://ops.example.com}) whose requests its API accepts besides
   * the request's own: for a console behind a reverse proxy that rewrites the Host header or terminates TLS. Absolute
   * http or https origins without a path; checked at startup. Forwarded headers are never read for this (with
   * {@code server.forward-headers-strategy=framework} the request already carries the public origin).
   */
  private List<String> trustedOrigins = new ArrayList<>();
  /**
   * How many records per state the key search looks at when the store is not the JDBC one (which searches its table
   * in one statement).
   */
  private int searchMaxScanned = 10_000;

  /**
   * Checks every setting but the hosts' names and the trusted origins, which the console's builder checks; the
   * message names the property and the bad value.
   *
   * @throws IllegalStateException on a bad setting
   */
  public void validate() {
    if (path == null || !PATH.matcher(path).matches() || path.length() > 200) {
      throw new IllegalStateException("idem.console.path must be a path such as /idem/console (segments of letters,"
          + " digits, '.', '_', '~' or '-', no trailing slash, at most 200 characters), got '" + path + "'");
    }
    if (allowedHosts == null || allowedHosts.isEmpty()) {
      throw new IllegalStateException("idem.console.allowed-hosts must name at least one host (or *), got "
          + allowedHosts);
    }
    if (searchMaxScanned < 1 || searchMaxScanned > 1_000_000) {
      throw new IllegalStateException("idem.console.search-max-scanned must be 1 to 1000000, got "
          + searchMaxScanned);
    }
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }

  public List<String> getAllowedHosts() {
    return allowedHosts;
  }

  public void setAllowedHosts(List<String> allowedHosts) {
    this.allowedHosts = allowedHosts;
  }

  public List<String> getTrustedOrigins() {
    return trustedOrigins;
  }

  public void setTrustedOrigins(List<String> trustedOrigins) {
    this.trustedOrigins = trustedOrigins == null ? new ArrayList<>() : trustedOrigins;
  }

  public int getSearchMaxScanned() {
    return searchMaxScanned;
  }

  public void setSearchMaxScanned(int searchMaxScanned) {
    this.searchMaxScanned = searchMaxScanned;
  }
}
