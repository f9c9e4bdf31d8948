package dev.idem.core;

import java.util.List;

/**
 * The key was reused with a different request. Never retry: send the new request with a new key. Maps to 422
 * {@code CONFLICT.idempotency.payload_mismatch}.
 */
public class PayloadMismatchException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final List<String> differingFields;

  public PayloadMismatchException(RecordKey key, List<String> differingFields) {
    super("key '" + key.key() + "' of " + key.operation() + " was first used with a different request"
        + (differingFields.isEmpty() ? "" : "; fields that differ: " + printable(differingFields))
        + ". Use a new key for a new request.");
    this.key = key;
    this.differingFields = List.copyOf(differingFields);
  }

  public RecordKey key() {
    return key;
  }

  public List<String> differingFields() {
    return differingFields;
  }

  /**
   * The member names as {@code [a, b]}, for a message or a log line: they are the client's (a JSON body's top-level
   * names), so what a client could use to forge or garble a log line is escaped as in a Java string: a backslash
   * doubled, CR, LF and tab as {@code \r}, {@code \n}, {@code \t}, and every other character outside printable
   * ASCII (controls, ANSI escape sequences, non-ASCII letters) as a backslash, {@code u} and four hex digits. This
   * exception's message uses it; so does the Spring starter's log line of a mismatch.
   */
  public static String printable(List<String> names) {
    StringBuilder out = new StringBuilder("[");
    for (int n = 0; n < names.size(); n++) {
      if (n > 0) {
        out.append(", ");
      }
      String name = names.get(n);
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        switch (c) {
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (c >= 0x20 && c < 0x7f) {
              out.append(c);
            } else {
              out.append(String.format("\\u%04x", (int) c));
            }
          }
        }
      }
    }
    return out.append(']').toString();
  }
}
