package dev.idem.core.fingerprint;

import dev.idem.core.internal.json.ByteSink;
import dev.idem.core.internal.json.CanonicalWriter;
import dev.idem.core.internal.json.JsonProjection;
import dev.idem.core.internal.json.JsonWorkspace;
import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Computes request {@link Fingerprint}s under a {@link FingerprintPolicy}. Immutable and thread-safe; create one per
 * policy and share it.
 *
 * <p>What is hashed (SHA-256, written as 64 lower-case hex characters):
 * <ul>
 *   <li>a JSON body: {@code UTF-8(operation) 0x0A 'J' canonical}, where {@code canonical} is the RFC 8785 form of
 *       the body after the policy's includes and excludes; when the body is a JSON object, each remaining top-level
 *       member also gets a field hash, the first 64 bits (16 hex characters) of the SHA-256 of its canonical value
 *       alone, so that a mismatch can name the
 *       fields that differ ({@link Fingerprint#differingFields});
 *   <li>any other body: {@code UTF-8(operation) 0x0A 'R' UTF-8(media type) 0x0A body}, the bytes as received after
 *       the request's media type in the canonical form {@link #canonicalMediaType} gives (empty when it has none), with
 *       no field hashes: the same bytes sent as {@code text/csv} and as {@code application/octet-stream} are two
 *       requests;
 *   <li>an empty (or null) body: {@code UTF-8(operation) 0x0A}, the operation alone.
 * </ul>
 * The one-byte tag ({@code 'J'} = 0x4A, {@code 'R'} = 0x52) keeps a raw body from ever colliding with a canonical
 * one. The operation must not contain a line feed, which keeps the encoding unambiguous.
 *
 * <p>Implementation note: a request is parsed once into a flat index over its bytes, and the canonical form is
 * written from the source bytes into a per-thread buffer that is then fed to the digest, so fingerprinting a body
 * allocates little beyond the result (see {@code BENCHMARKS.md}).
 */
public final class Fingerprinter {
  static final byte JSON_TAG = 'J';
  static final byte RAW_TAG = 'R';

  private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final Fingerprinter DEFAULTS = new Fingerprinter(FingerprintPolicy.ofDefaults());

  private final FingerprintPolicy policy;
  private final JsonProjection projection;
  private final int maxDepth;

  private Fingerprinter(FingerprintPolicy policy) {
    this.policy = policy;
    this.projection = JsonProjection.of(policy.includes(), policy.excludes());
    this.maxDepth = policy.maxDepth();
  }

  /** A fingerprinter applying {@code policy}. */
  public static Fingerprinter of(FingerprintPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    return policy.equals(FingerprintPolicy.ofDefaults()) ? DEFAULTS : new Fingerprinter(policy);
  }

  /** A fingerprinter of whole bodies. */
  public static Fingerprinter ofDefaults() {
    return DEFAULTS;
  }

  public FingerprintPolicy policy() {
    return policy;
  }

  /**
   * The fingerprint of a request. The body is read as JSON when {@code contentType} is null, {@code application/json}
   * or any {@code +json} type (case-insensitive, parameters ignored); if it then is not valid I-JSON, or the content
   * type is anything else, it is hashed raw.
   *
   * @param operation what the request is for, for example {@code POST /payments}; no line feed
   * @param body the request body; null or empty means no body
   * @param contentType the request's {@code Content-Type}, or null when it has none
   * @throws IllegalArgumentException when {@code operation} contains a line feed
   */
  public Fingerprint fingerprint(String operation, byte[] body, String contentType) {
    byte[] op = operationBytes(operation);
    if (body == null || body.length == 0) {
      return operationOnly(op);
    }
    if (contentType == null || isJsonMediaType(contentType)) {
      try (JsonWorkspace w = JsonWorkspace.acquire()) {
        if (w.tape.tryParse(body, maxDepth)) {
          return canonical(op, w);
        }
      }
    }
    try (JsonWorkspace w = JsonWorkspace.acquire()) {
      // everything before the body in one buffer, one digest call
      ByteSink head = w.sink;
      head.reset();
      head.write(op, 0, op.length);
      head.write('\n');
      head.write(RAW_TAG);
      writeMediaType(head, contentType);
      head.write('\n');
      MessageDigest md = w.sha256();
      md.update(head.array(), 0, head.size());
      md.update(body);
      return Fingerprint.ofHash(hex(md.digest()));
    }
  }

  /**
   * The fingerprint of a body that must be JSON.
   *
   * @throws MalformedJsonException when {@code body} is empty or not valid I-JSON
   * @throws IllegalArgumentException when {@code operation} contains a line feed
   */
  public Fingerprint fingerprintJson(String operation, byte[] body) {
    Objects.requireNonNull(body, "body");
    byte[] op = operationBytes(operation);
    try (JsonWorkspace w = JsonWorkspace.acquire()) {
      w.tape.parse(body, maxDepth);
      return canonical(op, w);
    }
  }

  /**
   * The canonical JSON (RFC 8785, UTF-8) that this fingerprinter hashes for {@code body}: after includes and
   * excludes. Empty when the policy's includes select nothing of a body whose root is a scalar.
   *
   * @throws MalformedJsonException when {@code body} is empty or not valid I-JSON
   */
  public byte[] canonicalJson(byte[] body) {
    Objects.requireNonNull(body, "body");
    try (JsonWorkspace w = JsonWorkspace.acquire()) {
      w.tape.parse(body, maxDepth);
      w.writer.write(w.tape, projection, w.sink);
      return w.sink.toByteArray();
    }
  }

  /**
   * Whether {@code contentType} names JSON: {@code application/json} or a type whose subtype ends in {@code +json}
   * (such as {@code application/merge-patch+json}), ignoring case, surrounding spaces and parameters. False for null.
   */
  public static boolean isJsonMediaType(String contentType) {
    if (contentType == null) {
      return false;
    }
    int end = contentType.indexOf(';');
    if (end < 0) {
      end = contentType.length();
    }
    int start = 0;
    while (start < end && isSpace(contentType.charAt(start))) {
      start++;
    }
    while (end > start && isSpace(contentType.charAt(end - 1))) {
      end--;
    }
    int len = end - start;
    if (len == 16 && contentType.regionMatches(true, start, "application/json", 0, 16)) {
      return true;
    }
    if (len < 8 || !contentType.regionMatches(true, end - 5, "+json", 0, 5)) {
      return false;
    }
    int slash = contentType.indexOf('/', start);
    if (slash <= start || slash >= end - 6) {
      return false;
    }
    int second = contentType.indexOf('/', slash + 1);
    return second < 0 || second >= end;
  }

  /**
   * The form of a {@code Content-Type} that a raw body's fingerprint hashes, so that writing one media type in
   * another way is the same request: the type and subtype in lower case, then its parameters sorted by name (a name
   * given twice keeps its order), each as {@code ;name="value"} with the name in lower case and the value unquoted and
   * quoted again ({@code charset}'s value in lower case, as it is case-insensitive; other values as sent). Spaces
   * around the parts and empty parameters are dropped. A control character (a line feed included), or {@code %},
   * is written as {@code %} and two hex digits, so the result never holds a line feed. Empty for null or blank.
   *
   * <p>{@code "Text/Plain ; Charset=UTF-8"} and {@code "text/plain;charset=utf-8"} both give
   * {@code text/plain;charset="utf-8"}.
   */
  public static String canonicalMediaType(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return "";
    }
    List<String> segments = splitParameters(contentType);
    StringBuilder out = new StringBuilder(contentType.length() + 8);
    appendEscaped(out, segments.get(0).strip().toLowerCase(Locale.ROOT));
    List<String[]> parameters = new ArrayList<>(segments.size() - 1);
    for (String segment : segments.subList(1, segments.size())) {
      int eq = segment.indexOf('=');
      String name = (eq < 0 ? segment : segment.substring(0, eq)).strip().toLowerCase(Locale.ROOT);
      String value = eq < 0 ? "" : unquote(segment.substring(eq + 1).strip());
      if (name.isEmpty() && value.isEmpty()) {
        continue;
      }
      parameters.add(new String[] {name, name.equals("charset") ? value.toLowerCase(Locale.ROOT) : value});
    }
    parameters.sort(Comparator.comparing(p -> p[0]));
    for (String[] parameter : parameters) {
      out.append(';');
      appendEscaped(out, parameter[0]);
      out.append("=\"");
      appendEscaped(out, parameter[1].replace("\\", "\\\\").replace("\"", "\\\""));
      out.append('"');
    }
    return out.toString();
  }

  /**
   * Writes the canonical media type to {@code out}. A type already in canonical form (printable ASCII without spaces,
   * upper case, {@code ;} or {@code %}, as {@code application/octet-stream} is) goes in as it is, without building
   * anything.
   */
  private static void writeMediaType(ByteSink out, String contentType) {
    if (contentType == null) {
      return;
    }
    int n = contentType.length();
    for (int i = 0; i < n; i++) {
      char c = contentType.charAt(i);
      if (c <= 0x20 || c >= 0x7F || c == ';' || c == '%' || (c >= 'A' && c <= 'Z')) {
        byte[] canonical = canonicalMediaType(contentType).getBytes(StandardCharsets.UTF_8);
        out.write(canonical, 0, canonical.length);
        return;
      }
    }
    out.writeAscii(contentType);
  }

  /** {@code contentType} cut at each {@code ;} that is not inside a quoted string. */
  private static List<String> splitParameters(String contentType) {
    List<String> segments = new ArrayList<>();
    boolean quoted = false;
    int start = 0;
    for (int i = 0; i < contentType.length(); i++) {
      char c = contentType.charAt(i);
      if (quoted && c == '\\') {
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ';' && !quoted) {
        segments.add(contentType.substring(start, i));
        start = i + 1;
      }
    }
    segments.add(contentType.substring(start));
    return segments;
  }

  /** The value of a quoted string ({@code "a\"b"} is {@code a"b}); any other value as it is. */
  private static String unquote(String value) {
    if (value.length() < 2 || value.charAt(0) != '"' || value.charAt(value.length() - 1) != '"') {
      return value;
    }
    StringBuilder out = new StringBuilder(value.length());
    for (int i = 1; i < value.length() - 1; i++) {
      char c = value.charAt(i);
      if (c == '\\' && i + 1 < value.length() - 1) {
        c = value.charAt(++i);
      }
      out.append(c);
    }
    return out.toString();
  }

  private static void appendEscaped(StringBuilder out, String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x20 || c == 0x7F || c == '%') {
        out.append('%').append((char) HEX_DIGITS[c >> 4]).append((char) HEX_DIGITS[c & 0xF]);
      } else {
        out.append(c);
      }
    }
  }

  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t';
  }

  private static byte[] operationBytes(String operation) {
    Objects.requireNonNull(operation, "operation");
    if (operation.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("operation must not contain a line feed, got '"
          + operation.replace("\n", "\\n") + "'");
    }
    return operation.getBytes(StandardCharsets.UTF_8);
  }

  private static Fingerprint operationOnly(byte[] op) {
    try (JsonWorkspace w = JsonWorkspace.acquire()) {
      MessageDigest md = w.sha256();
      md.update(op);
      md.update((byte) '\n');
      return Fingerprint.ofHash(hex(md.digest()));
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private Fingerprint canonical(byte[] op, JsonWorkspace w) {
    ByteSink sink = w.sink;
    CanonicalWriter writer = w.writer;
    writer.write(w.tape, projection, sink);
    byte[] bytes = sink.array();
    MessageDigest md = w.sha256();
    md.update(op);
    md.update((byte) '\n');
    md.update(JSON_TAG);
    md.update(bytes, 0, sink.size());
    byte[] digest = new byte[32];
    String hash = finish(md, digest);
    int members = writer.memberCount();
    if (members == 0 || members > MAX_FIELD_HASHES) {
      return Fingerprint.ofHash(hash);
    }
    Map.Entry<String, String>[] fields = new Map.Entry[members];
    for (int i = 0; i < members; i++) {
      String name = w.tape.memberName(writer.memberNameToken(i));
      if (name.length() > MAX_FIELD_NAME) {
        return Fingerprint.ofHash(hash);
      }
      int start = writer.memberValueStart(i);
      md.update(bytes, start, writer.memberValueEnd(i) - start);
      fields[i] = Map.entry(name, finish(md, digest).substring(0, FIELD_HASH_HEX));
    }
    return new Fingerprint(hash, Map.ofEntries(fields));
  }

  /** Completes {@code md} into {@code scratch} (32 bytes) and returns the digest as lower-case hex. */
  private static String finish(MessageDigest md, byte[] scratch) {
    try {
      md.digest(scratch, 0, 32);
    } catch (DigestException e) {
      throw new IllegalStateException("SHA-256 digest did not fit 32 bytes", e);
    }
    return hex(scratch);
  }

  /**
   * Field hashes keep the first 64 bits of the member's SHA-256 (16 hex characters): they only name the fields that
   * differ once the full hash already said the requests differ, and every record stores one per member.
   */
  static final int FIELD_HASH_HEX = 16;
  /**
   * The most top-level members a body may have and still get field hashes; a larger one gets none (its mismatch names
   * no field). The executor keeps no more in a record, so hashing more would be work for nothing.
   */
  public static final int MAX_FIELD_HASHES = 64;
  /** The longest member name (in UTF-16 units) a body may have and still get field hashes. */
  public static final int MAX_FIELD_NAME = 128;

  private static String hex(byte[] digest) {
    byte[] chars = new byte[digest.length * 2];
    for (int i = 0; i < digest.length; i++) {
      chars[2 * i] = HEX_DIGITS[(digest[i] >> 4) & 0xF];
      chars[2 * i + 1] = HEX_DIGITS[digest[i] & 0xF];
    }
    return new String(chars, StandardCharsets.ISO_8859_1);
  }
}
