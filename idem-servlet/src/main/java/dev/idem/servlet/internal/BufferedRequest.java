package dev.idem.servlet.internal;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The request with its body read into memory once, so that the fingerprint and the handler see the same bytes. A
 * form-encoded body ({@code application/x-www-form-urlencoded}) is parsed from those bytes for the parameter
 * methods, merged after the query string's parameters, as the container would have; unless the parameters come from
 * the wrapped request, for a form whose body something read before ({@link #bodyParameters}).
 */
public final class BufferedRequest extends HttpServletRequestWrapper {
  private final byte[] body;
  private final boolean parametersFromBody;
  private Map<String, String[]> parameters;

  /** The request serving {@code body}, a form's parameters parsed from it. */
  public BufferedRequest(HttpServletRequest request, byte[] body) {
    this(request, body, true);
  }

  /**
   * The request serving {@code body}; with {@code parametersFromBody} false, the parameter methods are the wrapped
   * request's (a form that the container, or a wrapper before, parsed already).
   */
  public BufferedRequest(HttpServletRequest request, byte[] body, boolean parametersFromBody) {
    super(request);
    this.body = body;
    this.parametersFromBody = parametersFromBody;
  }

  /** Whether {@code contentType} is {@code application/x-www-form-urlencoded}, parameters and case ignored. */
  public static boolean formEncoded(String contentType) {
    return contentType != null
        && contentType.split(";", 2)[0].trim().equalsIgnoreCase("application/x-www-form-urlencoded");
  }

  /**
   * The parameters of a form body as the request gives them, for a body that something before the caller read (the
   * container, asked for a parameter; a wrapper that parsed the form, such as Spring's {@code FormContentFilter}):
   * the request's parameter map less the query string's parameters (decoded as UTF-8; a value of a name is taken
   * off once for each time the query has it), names in the map's order. Empty when there are none, or when the
   * request cannot give its parameters.
   */
  public static Map<String, List<String>> bodyParameters(HttpServletRequest request) {
    Map<String, String[]> all;
    try {
      all = request.getParameterMap();
    } catch (RuntimeException e) {
      // Tomcat refuses a form it cannot decode (an unknown charset, a broken escape)
      return Map.of();
    }
    Map<String, List<String>> query = new LinkedHashMap<>();
    parse(request.getQueryString(), StandardCharsets.UTF_8, query);
    Map<String, List<String>> fields = new LinkedHashMap<>();
    all.forEach((name, values) -> {
      List<String> left = new ArrayList<>(Arrays.asList(values));
      query.getOrDefault(name, List.of()).forEach(left::remove);
      if (!left.isEmpty()) {
        fields.put(name, List.copyOf(left));
      }
    });
    return fields;
  }

  /**
   * The canonical form of a form's parameters, which the fingerprint hashes when the body itself is gone:
   * {@code application/x-www-form-urlencoded} in UTF-8, one {@code name=value} pair per value joined by {@code &},
   * names sorted by their UTF-8 bytes (unsigned), the values of one name in the order given; names and values encoded
   * as {@link URLEncoder} does in UTF-8 ({@code A-Z a-z 0-9 . - * _} as they are, a space as {@code +}, every other
   * byte as {@code %XX} with upper-case hex digits). A body sent in exactly this form fingerprints the same whether it
   * was read before the filter or not.
   */
  public static byte[] canonicalForm(Map<String, List<String>> fields) {
    List<String> names = new ArrayList<>(fields.keySet());
    names.sort((a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8),
        b.getBytes(StandardCharsets.UTF_8)));
    StringBuilder out = new StringBuilder();
    for (String name : names) {
      String encodedName = URLEncoder.encode(name, StandardCharsets.UTF_8);
      for (String value : fields.get(name)) {
        if (out.length() > 0) {
          out.append('&');
        }
        out.append(encodedName).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
      }
    }
    return out.toString().getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * Reads the whole body, refusing more than {@code limit} bytes.
   *
   * @return the body, or {@code null} when it is larger than the limit
   */
  public static byte[] readBody(HttpServletRequest request, int limit) throws IOException {
    long declared = request.getContentLengthLong();
    if (declared > limit) {
      return null;
    }
    InputStream in = request.getInputStream();
    // trust a declared length only up to 64 KiB before any byte arrives: beyond, grow as the bytes come, so that a
    // caller who declares a large body and sends little costs little (webhook receivers read before verifying)
    byte[] buf = new byte[(int) Math.min(limit + 1L, declared >= 0 ? Math.min(declared + 1, 65_536) : 8192)];
    int n = 0;
    while (true) {
      if (n == buf.length) {
        if (n > limit) {
          return null;
        }
        buf = Arrays.copyOf(buf, (int) Math.min(limit + 1L, (long) buf.length * 2));
      }
      int r = in.read(buf, n, buf.length - n);
      if (r < 0) {
        break;
      }
      n += r;
      if (n > limit) {
        return null;
      }
    }
    return Arrays.copyOf(buf, n);
  }

  public byte[] body() {
    return body;
  }

  private Map<String, String[]> parameters() {
    if (!parametersFromBody || !formEncoded(getContentType())) {
      return super.getParameterMap();
    }
    if (parameters == null) {
      Map<String, List<String>> merged = new LinkedHashMap<>();
      Charset charset = StandardCharsets.UTF_8;
      String encoding = getCharacterEncoding();
      if (encoding != null) {
        try {
          charset = Charset.forName(encoding);
        } catch (RuntimeException e) {
          charset = StandardCharsets.UTF_8;
        }
      }
      parse(getQueryString(), charset, merged);
      parse(new String(body, StandardCharsets.ISO_8859_1), charset, merged);
      Map<String, String[]> out = new LinkedHashMap<>();
      merged.forEach((k, v) -> out.put(k, v.toArray(String[]::new)));
      parameters = Collections.unmodifiableMap(out);
    }
    return parameters;
  }

  private static void parse(String encoded, Charset charset, Map<String, List<String>> into) {
    if (encoded == null || encoded.isEmpty()) {
      return;
    }
    for (String pair : encoded.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq), charset);
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1), charset);
      into.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
  }

  private static String decode(String s, Charset charset) {
    try {
      return URLDecoder.decode(s, charset);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  @Override
  public String getParameter(String name) {
    String[] values = parameters().get(name);
    return values == null || values.length == 0 ? null : values[0];
  }

  @Override
  public Map<String, String[]> getParameterMap() {
    return parameters();
  }

  @Override
  public Enumeration<String> getParameterNames() {
    return Collections.enumeration(parameters().keySet());
  }

  @Override
  public String[] getParameterValues(String name) {
    String[] values = parameters().get(name);
    return values == null ? null : values.clone();
  }

  @Override
  public ServletInputStream getInputStream() {
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    return new ServletInputStream() {
      @Override
      public boolean isFinished() {
        return in.available() == 0;
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setReadListener(ReadListener listener) {
        try {
          listener.onDataAvailable();
          listener.onAllDataRead();
        } catch (IOException e) {
          listener.onError(e);
        }
      }

      @Override
      public int read() {
        return in.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        int r = in.read(b, off, len);
        return r;
      }
    };
  }

  @Override
  public BufferedReader getReader() {
    Charset charset = StandardCharsets.UTF_8;
    String encoding = getCharacterEncoding();
    if (encoding != null) {
      try {
        charset = Charset.forName(encoding);
      } catch (UnsupportedCharsetException | IllegalCharsetNameException e) {
        charset = StandardCharsets.UTF_8;
      }
    }
    return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), charset));
  }

  @Override
  public int getContentLength() {
    return body.length;
  }

  @Override
  public long getContentLengthLong() {
    return body.length;
  }
}
