package dev.idem.core.fingerprint;

import dev.idem.core.IdemException;

/**
 * A request body, or any text given to Idem as JSON, is not valid I-JSON (RFC 7493): a syntax error, a duplicate
 * member name, a lone surrogate (escaped or as invalid UTF-8), a number outside the range of an IEEE 754 double,
 * trailing text after the value, or nesting deeper than the limit (256 levels unless configured).
 *
 * <p>The position is where the problem was found: {@link #line()} and {@link #column()} are 1-based, the column
 * counts Unicode code points from the start of the line, and {@link #offset()} is the 0-based byte offset in the
 * UTF-8 input (for a {@code String} input, in its UTF-8 encoding). Instances are immutable.
 */
public class MalformedJsonException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final String reason;
  private final int line;
  private final int column;
  private final long offset;

  /**
   * @param reason what is wrong, without the position (for example {@code "expected ':' after member name"})
   * @param line 1-based line
   * @param column 1-based column, in code points
   * @param offset 0-based byte offset
   */
  public MalformedJsonException(String reason, int line, int column, long offset) {
    super("malformed JSON at line " + line + ", column " + column + " (byte offset " + offset + "): " + reason);
    this.reason = reason;
    this.line = line;
    this.column = column;
    this.offset = offset;
  }

  /** What is wrong, without the position. */
  public String reason() {
    return reason;
  }

  /** 1-based line of the problem. */
  public int line() {
    return line;
  }

  /** 1-based column of the problem, counted in Unicode code points from the start of the line. */
  public int column() {
    return column;
  }

  /** 0-based byte offset of the problem in the UTF-8 input. */
  public long offset() {
    return offset;
  }
}
