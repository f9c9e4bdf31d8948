package dev.idem.servlet.internal;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Holds everything the handler writes (status, headers, body up to a bound) and touches the real response only in
 * {@link #writeTo}. Nothing is committed while the handler runs, so the filter can still decide what to send after
 * the transaction ends. Cookies ({@link #addCookie}) are held as {@code Set-Cookie} headers like any other, so that a
 * handler run whose answer is not sent (a rolled-back duplicate that replays the first answer, a refusal) sends none.
 * Not thread-safe, like the response it wraps.
 */
public final class CapturedResponse extends HttpServletResponseWrapper {
  /** Thrown from a write that would take the body past the bound. */
  public static final class BodyTooLargeException extends IOException {
    private static final long serialVersionUID = 1L;

    BodyTooLargeException(int limit) {
      super("the response body is larger than the " + limit + " bytes an idempotent route may keep");
    }
  }

  private static final DateTimeFormatter HTTP_DATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

  private final int limit;
  private final Map<String, Header> headers = new LinkedHashMap<>();
  private final Bounded body;
  private int status = 200;
  private String contentType;
  private String charset;
  private ServletOutputStream stream;
  private PrintWriter writer;
  private boolean overflowed;

  public CapturedResponse(HttpServletResponse response, int limit) {
    super(response);
    this.limit = limit;
    this.body = new Bounded(limit);
  }

  private static final class Header {
    final String name;
    /** Whether the handler set the header (replacing any value), rather than only adding values to it. */
    final boolean replaces;
    final List<String> values = new ArrayList<>(1);

    Header(String name, boolean replaces) {
      this.name = name;
      this.replaces = replaces;
    }
  }

  private final class Bounded extends ByteArrayOutputStream {
    private final int max;

    Bounded(int max) {
      super(Math.min(max, 1024));
      this.max = max;
    }

    void check(int more) throws BodyTooLargeException {
      if ((long) count + more > max) {
        overflowed = true;
        throw new BodyTooLargeException(limit);
      }
    }

    byte[] bytes() {
      return toByteArray();
    }
  }

  // ------------------------------------------------------------------ status

  @Override
  public void setStatus(int sc) {
    status = sc;
  }

  @Override
  public int getStatus() {
    return status;
  }

  @Override
  public void sendError(int sc) throws IOException {
    sendError(sc, null);
  }

  /**
   * The error becomes the answer: a problem document for 4xx and 5xx, an empty body otherwise. The message is left
   * out: frameworks put internal details there, and the answer may be stored and replayed.
   */
  @Override
  public void sendError(int sc, String msg) throws IOException {
    resetBuffer();
    headers.remove("content-type");
    status = sc;
    contentType = null;
    charset = null;
    if (sc >= 400 && sc <= 599) {
      contentType = Problem.MEDIA_TYPE;
      ProblemCode code = ProblemCode.forStatus(sc);
      body.write(Problem.of(code).toJson());
      Problem.announce(getResponse(), code.code());
    }
  }

  @Override
  public void sendRedirect(String location) {
    sendRedirect(location, 302, true);
  }

  @Override
  public void sendRedirect(String location, int sc) {
    sendRedirect(location, sc, true);
  }

  @Override
  public void sendRedirect(String location, boolean clearBuffer) {
    sendRedirect(location, 302, clearBuffer);
  }

  @Override
  public void sendRedirect(String location, int sc, boolean clearBuffer) {
    if (clearBuffer) {
      resetBuffer();
    }
    status = sc;
    setHeader("Location", location);
  }

  // ------------------------------------------------------------------ headers

  @Override
  public void setHeader(String name, String value) {
    if (special(name, value)) {
      return;
    }
    String lower = name.toLowerCase(Locale.ROOT);
    headers.remove(lower);
    if (value != null) {
      Header h = new Header(name, true);
      h.values.add(value);
      headers.put(lower, h);
    }
  }

  @Override
  public void addHeader(String name, String value) {
    if (value == null || special(name, value)) {
      return;
    }
    headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new Header(name, false)).values.add(value);
  }

  /**
   * Held as a {@code Set-Cookie} header ({@link #setCookieHeader}), not added to the real response: the cookie goes
   * out only with the answer this capture becomes, and a kept answer drops it as it drops every {@code Set-Cookie}.
   *
   * @throws IllegalArgumentException when the cookie's value or an attribute's value holds a control character or
   *     a {@code ;}, which would break the header (as the containers refuse such cookies)
   */
  @Override
  public void addCookie(Cookie cookie) {
    addHeader("Set-Cookie", setCookieHeader(cookie, System.currentTimeMillis()));
  }

  /**
   * The {@code Set-Cookie} value of a cookie (RFC 6265): {@code name=value}, then each of the cookie's attributes
   * ({@link Cookie#getAttributes()}: {@code Domain}, {@code Path}, {@code Max-Age}, {@code Secure}, {@code HttpOnly},
   * {@code SameSite} and any other) as {@code ; Name=value}, or {@code ; Name} for one with an empty value, in the
   * cookie's order; a {@code Max-Age} is followed by the {@code Expires} date it comes to, for clients that know only
   * {@code Expires}. A null value is written as an empty one.
   *
   * @param now the time {@code Expires} counts from, in epoch milliseconds
   * @throws IllegalArgumentException when the value or an attribute's value holds a control character or a {@code ;}
   */
  public static String setCookieHeader(Cookie cookie, long now) {
    StringBuilder out = new StringBuilder(cookie.getName()).append('=');
    String value = cookie.getValue();
    if (value != null) {
      out.append(checked(cookie.getName(), value));
    }
    for (Map.Entry<String, String> a : cookie.getAttributes().entrySet()) {
      String attribute = a.getKey();
      String v = a.getValue();
      out.append("; ").append(attribute);
      if (v == null || v.isEmpty()) {
        continue;
      }
      out.append('=').append(checked(cookie.getName() + "'s " + attribute, v));
      if (attribute.equalsIgnoreCase("Max-Age")) {
        long seconds = Math.max(0, cookie.getMaxAge());
        // a cookie removed (Max-Age 0) expires at the epoch, as the containers write it
        out.append("; Expires=").append(HTTP_DATE.format(
            seconds == 0 ? Instant.EPOCH : Instant.ofEpochMilli(now).plusSeconds(seconds)));
      }
    }
    return out.toString();
  }

  private static String checked(String what, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 && c != '\t' || c == 0x7F || c == ';') {
        throw new IllegalArgumentException("the cookie " + what + " holds a control character or ';' at index " + i
            + ", which a Set-Cookie header cannot carry");
      }
    }
    return value;
  }

  /** Content-Type and Content-Length are kept apart: the first has its own accessors, the second is computed. */
  private boolean special(String name, String value) {
    if (name.equalsIgnoreCase("Content-Type")) {
      setContentType(value);
      return true;
    }
    return name.equalsIgnoreCase("Content-Length") || name.equalsIgnoreCase("Transfer-Encoding")
        || name.equalsIgnoreCase("Connection");
  }

  @Override
  public void setIntHeader(String name, int value) {
    setHeader(name, Integer.toString(value));
  }

  @Override
  public void addIntHeader(String name, int value) {
    addHeader(name, Integer.toString(value));
  }

  @Override
  public void setDateHeader(String name, long date) {
    setHeader(name, HTTP_DATE.format(Instant.ofEpochMilli(date)));
  }

  @Override
  public void addDateHeader(String name, long date) {
    addHeader(name, HTTP_DATE.format(Instant.ofEpochMilli(date)));
  }

  @Override
  public boolean containsHeader(String name) {
    return name.equalsIgnoreCase("Content-Type") ? contentType != null
        : headers.containsKey(name.toLowerCase(Locale.ROOT));
  }

  @Override
  public String getHeader(String name) {
    if (name.equalsIgnoreCase("Content-Type")) {
      return getContentType();
    }
    Header h = headers.get(name.toLowerCase(Locale.ROOT));
    return h == null ? null : h.values.get(0);
  }

  @Override
  public Collection<String> getHeaders(String name) {
    if (name.equalsIgnoreCase("Content-Type")) {
      return contentType == null ? List.of() : List.of(getContentType());
    }
    Header h = headers.get(name.toLowerCase(Locale.ROOT));
    return h == null ? List.of() : List.copyOf(h.values);
  }

  @Override
  public Collection<String> getHeaderNames() {
    List<String> names = new ArrayList<>();
    if (contentType != null) {
      names.add("Content-Type");
    }
    headers.values().forEach(h -> names.add(h.name));
    return names;
  }

  @Override
  public void setContentLength(int len) {}

  @Override
  public void setContentLengthLong(long len) {}

  @Override
  public void setContentType(String type) {
    if (type == null) {
      contentType = null;
      return;
    }
    int semi = type.indexOf(';');
    if (semi < 0) {
      contentType = type.trim();
      return;
    }
    contentType = type.substring(0, semi).trim();
    for (String param : type.substring(semi + 1).split(";")) {
      String p = param.trim();
      if (p.regionMatches(true, 0, "charset=", 0, 8) && writer == null) {
        charset = p.substring(8).replace("\"", "").trim();
      }
    }
  }

  @Override
  public String getContentType() {
    if (contentType == null) {
      return null;
    }
    return charset == null ? contentType : contentType + ";charset=" + charset;
  }

  @Override
  public void setCharacterEncoding(String encoding) {
    if (writer == null) {
      charset = encoding;
    }
  }

  @Override
  public void setCharacterEncoding(Charset encoding) {
    setCharacterEncoding(encoding == null ? null : encoding.name());
  }

  @Override
  public String getCharacterEncoding() {
    return charset != null ? charset : containerDefaultCharset();
  }

  /** What the container (or a filter before this one, such as Spring's encoding filter) set on the real response. */
  private String containerDefaultCharset() {
    String set = getResponse().getCharacterEncoding();
    return set != null ? set : StandardCharsets.ISO_8859_1.name();
  }

  @Override
  public void setLocale(Locale loc) {
    if (loc != null) {
      setHeader("Content-Language", loc.toLanguageTag());
    }
  }

  // ------------------------------------------------------------------ body

  @Override
  public ServletOutputStream getOutputStream() {
    if (writer != null) {
      throw new IllegalStateException("getWriter() has already been called on this response");
    }
    if (stream == null) {
      stream = new ServletOutputStream() {
        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
          try {
            listener.onWritePossible();
          } catch (IOException e) {
            listener.onError(e);
          }
        }

        @Override
        public void write(int b) throws IOException {
          body.check(1);
          body.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          body.check(len);
          body.write(b, off, len);
        }
      };
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() {
    if (stream != null) {
      throw new IllegalStateException("getOutputStream() has already been called on this response");
    }
    if (writer == null) {
      if (charset == null) {
        charset = containerDefaultCharset();
      }
      Charset cs;
      try {
        cs = Charset.forName(charset);
      } catch (RuntimeException e) {
        cs = StandardCharsets.UTF_8;
        charset = cs.name();
      }
      writer = new PrintWriter(new OutputStreamWriter(new java.io.OutputStream() {
        @Override
        public void write(int b) throws IOException {
          body.check(1);
          body.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          body.check(len);
          body.write(b, off, len);
        }
      }, cs), false);
    }
    return writer;
  }

  @Override
  public void flushBuffer() {
    flushWriter();
  }

  @Override
  public boolean isCommitted() {
    return false;
  }

  @Override
  public void reset() {
    resetBuffer();
    headers.clear();
    status = 200;
    contentType = null;
    charset = null;
  }

  @Override
  public void resetBuffer() {
    flushWriter();
    body.reset();
  }

  @Override
  public int getBufferSize() {
    return limit;
  }

  @Override
  public void setBufferSize(int size) {}

  private void flushWriter() {
    if (writer != null) {
      writer.flush();
    }
  }

  /**
   * Whether the handler wrote more than the bound, through the output stream or a writer (whose {@link PrintWriter}
   * swallows the failure), whether or not the handler went on.
   */
  public boolean overflowed() {
    flushWriter();
    return overflowed || writer != null && writer.checkError();
  }

  /**
   * The captured body. A writer that failed on the bound (a {@link PrintWriter} swallows exceptions) is reported
   * here.
   *
   * @throws BodyTooLargeException when the handler wrote more than the bound through a writer
   */
  public byte[] body() throws BodyTooLargeException {
    flushWriter();
    if (writer != null && writer.checkError()) {
      throw new BodyTooLargeException(limit);
    }
    return body.bytes();
  }

  /**
   * The headers to keep for replays: those whose (case-insensitive) name is in the allow-list, in the order the
   * handler set them, plus Content-Type.
   */
  public Map<String, List<String>> headersToKeep(java.util.Set<String> allowListLowerCase) {
    Map<String, List<String>> kept = new LinkedHashMap<>();
    if (contentType != null) {
      kept.put("Content-Type", List.of(getContentType()));
    }
    for (Map.Entry<String, Header> e : headers.entrySet()) {
      if (allowListLowerCase.contains(e.getKey())) {
        kept.put(e.getValue().name, List.copyOf(e.getValue().values));
      }
    }
    return kept;
  }

  /**
   * The lower-case names of the headers the handler only added values to ({@code addHeader}, {@code addCookie}),
   * never set: they go to the real response with {@code addHeader}, after any value a filter before this capture set
   * there (a session cookie, say), where a header the handler set replaces such values.
   */
  public Set<String> addedHeaders() {
    Set<String> added = new java.util.HashSet<>();
    headers.forEach((lower, h) -> {
      if (!h.replaces) {
        added.add(lower);
      }
    });
    return added;
  }

  /** Every header the handler set, for the live answer (which may carry headers that are not kept). */
  public Map<String, List<String>> allHeaders() {
    Map<String, List<String>> all = new LinkedHashMap<>();
    if (contentType != null) {
      all.put("Content-Type", List.of(getContentType()));
    }
    headers.values().forEach(h -> all.put(h.name, List.copyOf(h.values)));
    return all;
  }
}
