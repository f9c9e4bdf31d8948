package dev.idem.console.internal;

import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The console's files, read once from the class path ({@code dev/idem/console/assets/}). Immutable. */
public final class Assets {
  private static final String FOLDER = "dev/idem/console/assets/";
  private static final Map<String, String> FILES = Map.of(
      "index.html", "text/html;charset=UTF-8",
      "console.js", "text/javascript;charset=UTF-8",
      "console.css", "text/css;charset=UTF-8",
      "favicon.svg", "image/svg+xml");

  private record Asset(byte[] bytes, String contentType) {}

  private final Map<String, Asset> assets;

  private Assets(Map<String, Asset> assets) {
    this.assets = Map.copyOf(assets);
  }

  /** Reads every file; fails when one is missing. */
  public static Assets load() {
    Map<String, Asset> assets = new LinkedHashMap<>();
    FILES.forEach((name, type) -> assets.put(name, new Asset(read(FOLDER + name), type)));
    return new Assets(assets);
  }

  private static byte[] read(String resource) {
    try (InputStream in = Assets.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the console's file " + resource + " is missing from the class path");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the console's file " + resource, e);
    }
  }

  /** Answers {@code name} ("" for the page), GET and HEAD only. */
  public void serve(String name, HttpServletRequest request, HttpServletResponse response) throws IOException {
    Asset asset = assets.get(name.isEmpty() ? "index.html" : name);
    boolean head = request.getMethod().equals("HEAD");
    if (!head && !request.getMethod().equals("GET")) {
      HttpBodies.discardOrClose(request, response, 0);
      response.setHeader("Allow", "GET, HEAD");
      Problem.of(ConsoleProblems.METHOD).withDetail("the console's files answer GET and HEAD only").write(response);
      return;
    }
    if (asset == null) {
      Problem.of(ConsoleProblems.FILE_NOT_FOUND).withDetail("the console has no file " + name).write(response);
      return;
    }
    response.setStatus(HttpServletResponse.SC_OK);
    response.setContentType(asset.contentType());
    response.setContentLength(asset.bytes().length);
    if (!head) {
      response.getOutputStream().write(asset.bytes());
    }
  }
}
