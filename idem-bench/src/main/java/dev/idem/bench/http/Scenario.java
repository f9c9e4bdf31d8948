package dev.idem.bench.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * One kind of request the {@link LoadHarness} sends over and over: a name, method, local URL, fixed headers, a body,
 * an {@link KeyStrategy idempotency key strategy} and the statuses that count as success. Immutable and
 * thread-safe, provided the body function is.
 *
 * <pre>Scenario.builder("idem").method("POST").url("http://127.0.0.1:8080/payments")
 *     .header("Authorization", "Bearer sk_test_alice").header("Content-Type", "application/json")
 *     .body("{\"amount\":100}").keys(KeyStrategy.unique()).expectStatus(200, 201).build();</pre>
 */
public final class Scenario {
  private static final Set<Integer> ALL_2XX =
      Collections.unmodifiableSet(new TreeSet<>(IntStream.range(200, 300).boxed().toList()));

  private final String name;
  private final String method;
  private final URI uri;
  private final List<Map.Entry<String, String>> headers;
  private final IntFunction<byte[]> body;
  private final KeyStrategy keys;
  private final Set<Integer> expectedStatuses;

  private Scenario(Builder b) {
    this.name = b.name;
    this.method = b.method;
    this.uri = b.uri;
    this.headers = List.copyOf(b.headers);
    this.body = b.body;
    this.keys = b.keys;
    this.expectedStatuses = b.expectedStatuses;
  }

  /** A builder for a scenario called {@code name}; the name labels it in the report and must be unique per run. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  public String method() {
    return method;
  }

  public URI uri() {
    return uri;
  }

  /** The fixed headers in the order given, without the idempotency key header. */
  public List<Map.Entry<String, String>> headers() {
    return headers;
  }

  public KeyStrategy keys() {
    return keys;
  }

  /** Responses with any other status count as errors. */
  public Set<Integer> expectedStatuses() {
    return expectedStatuses;
  }

  public boolean hasBody() {
    return body != null;
  }

  byte[] bodyFor(int index) {
    if (body == null) {
      return new byte[0];
    }
    byte[] bytes = body.apply(index);
    if (bytes == null) {
      throw new IllegalStateException("body function of scenario " + name + " returned null for index " + index);
    }
    return bytes;
  }

  @Override
  public String toString() {
    return name + ": " + method + " " + uri + ", keys " + keys;
  }

  /** Builds a {@link Scenario}; validates each value as it is set. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private String method = "GET";
    private URI uri;
    private final List<Map.Entry<String, String>> headers = new ArrayList<>();
    private IntFunction<byte[]> body;
    private KeyStrategy keys = KeyStrategy.none();
    private Set<Integer> expectedStatuses = ALL_2XX;

    private Builder(String name) {
      if (name == null || name.isBlank() || !name.strip().equals(name)) {
        throw new IllegalArgumentException("name must be non-blank without surrounding spaces, got \"" + name + "\"");
      }
      this.name = name;
    }

    /** The HTTP method, an upper-case token such as {@code POST}; default {@code GET}. */
    public Builder method(String method) {
      if (method == null || !method.matches("[A-Z][A-Z_-]*")) {
        throw new IllegalArgumentException("method must be an upper-case token such as POST, got \"" + method + "\"");
      }
      this.method = method;
      return this;
    }

    /**
     * The target, which must be {@code http://127.0.0.1[:port]/...} or {@code http://localhost[:port]/...}: the
     * harness only sends traffic to the local machine.
     *
     * @throws IllegalArgumentException naming the value for any other URL
     */
    public Builder url(String url) {
      if (url == null) {
        throw new IllegalArgumentException("url must be http://127.0.0.1 or http://localhost, got null");
      }
      try {
        return url(new URI(url));
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException("url is not a valid URI: \"" + url + "\" (" + e.getMessage() + ")", e);
      }
    }

    /** As {@link #url(String)}. */
    public Builder url(URI uri) {
      Objects.requireNonNull(uri, "url");
      String host = uri.getHost();
      boolean local = "http".equalsIgnoreCase(uri.getScheme()) && uri.getRawUserInfo() == null && host != null
          && (host.equals("127.0.0.1") || host.toLowerCase(Locale.ROOT).equals("localhost"));
      if (!local) {
        throw new IllegalArgumentException(
            "url must be http://127.0.0.1 or http://localhost (local traffic only), got \"" + uri + "\"");
      }
      this.uri = uri;
      return this;
    }

    /**
     * Adds a fixed header sent with every request; repeatable. Names the HTTP client manages itself ({@code Host},
     * {@code Content-Length}, {@code Connection}, ...) are rejected, and so is {@value KeyStrategy#HEADER}: use
     * {@link #keys(KeyStrategy)}.
     */
    public Builder header(String name, String value) {
      if (name == null || value == null) {
        throw new IllegalArgumentException("header name and value must be non-null, got " + name + ": " + value);
      }
      if (name.equalsIgnoreCase(KeyStrategy.HEADER)) {
        throw new IllegalArgumentException("header " + name + " is set by keys(KeyStrategy), not as a fixed header");
      }
      try {
        HttpRequest.newBuilder().header(name, value);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("header \"" + name + ": " + value + "\" is not allowed: " + e.getMessage(),
            e);
      }
      headers.add(Map.entry(name, value));
      return this;
    }

    /** The same body for every request. */
    public Builder body(byte[] body) {
      Objects.requireNonNull(body, "body");
      byte[] copy = body.clone();
      this.body = index -> copy;
      return this;
    }

    /** The same UTF-8 body for every request. */
    public Builder body(String body) {
      Objects.requireNonNull(body, "body");
      return body(body.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A body per request index: the pool slot for {@link KeyStrategy#fixedPool}, so a replay carries the same body
     * as its key's first execution, otherwise a running per-scenario request number from 0. The function must be
     * thread-safe, must not return null, and must not modify an array after returning it.
     */
    public Builder body(IntFunction<byte[]> body) {
      this.body = Objects.requireNonNull(body, "body");
      return this;
    }

    /** The idempotency key strategy; default {@link KeyStrategy#none()}. */
    public Builder keys(KeyStrategy keys) {
      this.keys = Objects.requireNonNull(keys, "keys");
      return this;
    }

    /** The statuses that count as success; default any 2xx. */
    public Builder expectStatus(int... statuses) {
      if (statuses == null || statuses.length == 0) {
        throw new IllegalArgumentException("expectStatus needs at least one status, got none");
      }
      Set<Integer> set = new TreeSet<>();
      for (int s : statuses) {
        if (s < 100 || s > 599) {
          throw new IllegalArgumentException("expected status must be in [100, 599], got " + s + " in "
              + Arrays.toString(statuses));
        }
        set.add(s);
      }
      this.expectedStatuses = Collections.unmodifiableSet(set);
      return this;
    }

    /** @throws IllegalStateException when no URL was set */
    public Scenario build() {
      if (uri == null) {
        throw new IllegalStateException("scenario " + name + " has no url");
      }
      return new Scenario(this);
    }
  }
}
