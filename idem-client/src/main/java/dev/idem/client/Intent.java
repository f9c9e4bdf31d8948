package dev.idem.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * What the caller wants done once: method, URI, headers, body, and how it is keyed. Immutable and thread-safe; vary
 * with the {@code with...} methods.
 *
 * <p>Keying: an unsafe intent (any method but the safe GET, HEAD, OPTIONS and TRACE: POST, PUT, PATCH, DELETE, and
 * extension methods such as WebDAV's) gets a fresh UUIDv7 key when it is sent, unless the caller gave its own with
 * {@link #withKey(String)}; {@link #withoutKey()} sends it without one, and then it is never retried. Safe methods
 * never carry a key.
 */
public final class Intent {
  /** The methods RFC 9110 defines as safe; every other one, extension methods included, may change something. */
  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS", "TRACE");
  private static final Set<String> MANAGED_HEADERS = Set.of(
      IdempotentHttpClient.IDEMPOTENCY_KEY.toLowerCase(Locale.ROOT),
      IdempotentHttpClient.ATTEMPT_HEADER.toLowerCase(Locale.ROOT),
      IdempotentHttpClient.REQUEST_TIMEOUT_HEADER.toLowerCase(Locale.ROOT));
  /** Headers java.net.http sets itself and refuses from callers. */
  private static final Set<String> TRANSPORT_HEADERS =
      Set.of("connection", "content-length", "expect", "host", "upgrade");
  private static final byte[] EMPTY = new byte[0];

  /** How the key of an unsafe intent is chosen. */
  enum Keying { GENERATED, GIVEN, NONE }

  private final String method;
  private final URI uri;
  private final List<Map.Entry<String, String>> headers;
  private final byte[] body;
  private final Keying keying;
  private final String key;
  private final Duration timeout;

  private Intent(
      String method, URI uri, List<Map.Entry<String, String>> headers, byte[] body, Keying keying, String key,
      Duration timeout) {
    this.method = method;
    this.uri = uri;
    this.headers = headers;
    this.body = body;
    this.keying = keying;
    this.key = key;
    this.timeout = timeout;
  }

  /**
   * An intent with no headers and no body.
   *
   * @throws IllegalArgumentException when the method is blank or not an HTTP token, or the URI is not absolute http(s)
   */
  public static Intent of(String method, URI uri) {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(uri, "uri");
    if (method.isEmpty() || !method.chars().allMatch(c -> c > 32 && c < 127 && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0)) {
      throw new IllegalArgumentException("method must be an HTTP token, was '" + method + "'");
    }
    String scheme = uri.getScheme();
    if (!uri.isAbsolute() || !("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme))
        || uri.getHost() == null) {
      throw new IllegalArgumentException("uri must be an absolute http or https URI with a host, was " + uri);
    }
    return new Intent(method.toUpperCase(Locale.ROOT), uri, List.of(), EMPTY, Keying.GENERATED, null, null);
  }

  /** A POST of {@code body}. */
  public static Intent post(URI uri, byte[] body) {
    return of("POST", uri).withBody(body);
  }

  /** A PUT of {@code body}. */
  public static Intent put(URI uri, byte[] body) {
    return of("PUT", uri).withBody(body);
  }

  /** A GET. */
  public static Intent get(URI uri) {
    return of("GET", uri);
  }

  /** A DELETE. */
  public static Intent delete(URI uri) {
    return of("DELETE", uri);
  }

  /**
   * This intent with one more header. {@code Idempotency-Key}, {@code Idempotency-Attempt} and {@code Request-Timeout}
   * are the client's to send: use {@link #withKey(String)} and {@link #withTimeout(Duration)} instead.
   *
   * @throws IllegalArgumentException for one of those names, for a header the transport sets itself
   *     ({@code Connection}, {@code Content-Length}, {@code Expect}, {@code Host}, {@code Upgrade}), or for a name or
   *     value that is not a valid header
   */
  public Intent withHeader(String name, String value) {
    Objects.requireNonNull(name, "header name");
    Objects.requireNonNull(value, "header value");
    if (MANAGED_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("header '" + name + "' is set by the client; use withKey(...) for the key"
          + " and withTimeout(...) for the deadline");
    }
    if (TRANSPORT_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("header '" + name + "' is set by the transport (java.net.http) and cannot be"
          + " given on an intent");
    }
    if (name.isEmpty() || !name.chars().allMatch(c -> c > 32 && c < 127 && c != ':')) {
      throw new IllegalArgumentException("header name must be a visible ASCII token, was '" + name + "'");
    }
    if (value.chars().anyMatch(c -> c == '\r' || c == '\n')) {
      throw new IllegalArgumentException("header '" + name + "' value must not contain CR or LF");
    }
    List<Map.Entry<String, String>> more = new ArrayList<>(headers);
    more.add(Map.entry(name, value));
    return new Intent(method, uri, Collections.unmodifiableList(more), body, keying, key, timeout);
  }

  /** This intent with {@code body} (copied). */
  public Intent withBody(byte[] body) {
    Objects.requireNonNull(body, "body");
    return new Intent(method, uri, headers, body.clone(), keying, key, timeout);
  }

  /**
   * This intent keyed by the caller's {@code key} instead of a generated one.
   *
   * @throws IllegalArgumentException when the key is empty, longer than 255 characters or not visible ASCII
   *     (docs/architecture.md, "HTTP contract")
   */
  public Intent withKey(String key) {
    Objects.requireNonNull(key, "key");
    if (key.isEmpty() || key.length() > 255 || !key.chars().allMatch(c -> c > 32 && c < 127)) {
      throw new IllegalArgumentException(
          "key must be 1 to 255 visible ASCII characters, was '" + key + "' (" + key.length() + " characters)");
    }
    return new Intent(method, uri, headers, body, Keying.GIVEN, key, timeout);
  }

  /** This intent sent without an idempotency key. An unsafe intent without a key is never retried. */
  public Intent withoutKey() {
    return new Intent(method, uri, headers, body, Keying.NONE, null, timeout);
  }

  /**
   * This intent with its own total deadline (all attempts and waits), instead of the policy's.
   *
   * @throws IllegalArgumentException unless at least 1 ms
   */
  public Intent withTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.toMillis() < 1) {
      throw new IllegalArgumentException("timeout must be >= 1 ms, was " + timeout);
    }
    return new Intent(method, uri, headers, body, keying, key, timeout);
  }

  /** This intent without the headers whose lower-case names are in {@code lowerCaseNames}. */
  Intent withoutHeaders(Set<String> lowerCaseNames) {
    List<Map.Entry<String, String>> kept = new ArrayList<>();
    for (Map.Entry<String, String> h : headers) {
      if (!lowerCaseNames.contains(h.getKey().toLowerCase(Locale.ROOT))) {
        kept.add(h);
      }
    }
    return new Intent(method, uri, Collections.unmodifiableList(kept), body, keying, key, timeout);
  }

  /** This intent without its own deadline (a journaled intent is resumed under the policy's deadline). */
  Intent withTimeoutCleared() {
    return new Intent(method, uri, headers, body, keying, key, null);
  }

  public String method() {
    return method;
  }

  public URI uri() {
    return uri;
  }

  /** The caller's headers, in order (names as given). */
  public List<Map.Entry<String, String>> headers() {
    return headers;
  }

  /** A copy of the body. */
  public byte[] body() {
    return body.clone();
  }

  /** Whether this is the same request as {@code other}: method, URI, headers and body. */
  boolean sameRequestAs(Intent other) {
    return method().equals(other.method()) && uri().toString().equals(other.uri().toString())
        && headers().equals(other.headers()) && java.util.Arrays.equals(bodyUnsafe(), other.bodyUnsafe());
  }

  byte[] bodyUnsafe() {
    return body;
  }

  /** The caller's key, if one was given (generated keys are on the {@link Response}). */
  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  /** The intent's own deadline, if any. */
  public Optional<Duration> timeout() {
    return Optional.ofNullable(timeout);
  }

  /**
   * Whether the method is unsafe (any but GET, HEAD, OPTIONS and TRACE): such intents carry an idempotency key, and
   * without one are sent once, never retried.
   */
  public boolean isUnsafe() {
    return !SAFE.contains(method);
  }

  /** Whether this intent was explicitly told to go without a key. */
  public boolean isWithoutKey() {
    return keying == Keying.NONE;
  }

  @Override
  public String toString() {
    return "Intent[" + method + " " + uri + (key != null ? ", key " + key : keying == Keying.NONE ? ", no key" : "")
        + ", " + body.length + " body bytes]";
  }
}
