package dev.idem.examples.payments.console;

import dev.idem.examples.payments.web.PaymentsProblems;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.Problem;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Serves the console's files ({@code console/*} on the class path) at {@code /console/}, without credentials: the
 * page holds no data, and every call its script makes needs the admin key. The files are read once, at startup.
 * Every answer forbids caching, sniffing and framing, and its Content-Security-Policy allows only the console's own
 * script, style sheet and calls (no inline script or style). Immutable and thread-safe.
 *
 * <p>A filter rather than a controller: it runs before the authentication filter, which would otherwise ask the
 * page for an API key, and the service maps no static resources ({@code spring.web.resources.add-mappings=false}).
 */
final class ConsoleAssets implements Filter {
  /** The console's Content-Security-Policy. */
  static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self';"
      + " img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  private static final String PREFIX = "/console/";
  private static final Map<String, String> FILES = Map.of(
      "index.html", "text/html;charset=UTF-8",
      "console.js", "text/javascript;charset=UTF-8",
      "console.css", "text/css;charset=UTF-8",
      "favicon.svg", "image/svg+xml");

  private record Asset(byte[] bytes, String contentType) {}

  private final Map<String, Asset> assets;

  private ConsoleAssets(Map<String, Asset> assets) {
    this.assets = Map.copyOf(assets);
  }

  /** The files under {@code console/} on this class's class path. */
  static ConsoleAssets fromClasspath() {
    Map<String, Asset> assets = new LinkedHashMap<>();
    FILES.forEach((name, type) -> assets.put(name, new Asset(read("console/" + name), type)));
    return new ConsoleAssets(assets);
  }

  private static byte[] read(String resource) {
    try (InputStream in = ConsoleAssets.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the console's file " + resource + " is missing from the class path");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the console's file " + resource, e);
    }
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException {
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    String path = IdempotencyFilter.pathWithinApplication(request);
    secure(response);
    if (path.equals("/console")) {
      response.setStatus(HttpServletResponse.SC_FOUND);
      response.setHeader("Location", request.getContextPath() + PREFIX);
      return;
    }
    String name = path.equals(PREFIX) ? "index.html" : path.substring(PREFIX.length());
    Asset asset = assets.get(name);
    if (asset == null) {
      Problem.of(PaymentsProblems.CONSOLE_FILE_NOT_FOUND)
          .withDetail("the console has no file " + path).write(response);
      return;
    }
    boolean head = request.getMethod().equals("HEAD");
    if (!head && !request.getMethod().equals("GET")) {
      response.setHeader("Allow", "GET, HEAD");
      Problem.of(PaymentsProblems.CONSOLE_METHOD)
          .withDetail("the console's files answer GET and HEAD only").write(response);
      return;
    }
    response.setStatus(HttpServletResponse.SC_OK);
    response.setContentType(asset.contentType());
    response.setContentLength(asset.bytes().length);
    if (!head) {
      response.getOutputStream().write(asset.bytes());
    }
  }

  private static void secure(HttpServletResponse response) {
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    response.setHeader("X-Content-Type-Options", "nosniff");
    response.setHeader("X-Frame-Options", "DENY");
    response.setHeader("Referrer-Policy", "no-referrer");
    response.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  }
}
