package dev.idem.core.internal.json;

import static dev.idem.core.internal.json.JsonTape.ARRAY;
import static dev.idem.core.internal.json.JsonTape.ESCAPED;
import static dev.idem.core.internal.json.JsonTape.FALSE;
import static dev.idem.core.internal.json.JsonTape.NEGATIVE;
import static dev.idem.core.internal.json.JsonTape.NULL;
import static dev.idem.core.internal.json.JsonTape.NUMBER;
import static dev.idem.core.internal.json.JsonTape.NUMBER_DOUBLE;
import static dev.idem.core.internal.json.JsonTape.OBJECT;
import static dev.idem.core.internal.json.JsonTape.STRING;
import static dev.idem.core.internal.json.JsonTape.TRUE;

import java.util.Arrays;

/**
 * Writes a {@link JsonTape} in RFC 8785 canonical form, optionally through a {@link JsonProjection}, straight from
 * the source bytes: strings without escapes are copied, escapes are rewritten to the canonical ones, numbers with at
 * most 15 significant digits are re-spelled from their literal digits, others go through {@link EcmaNumbers}.
 * Not thread-safe (holds the member-span list); cheap to create.
 */
public final class CanonicalWriter {
  private static final byte[] TRUE_BYTES = {'t', 'r', 'u', 'e'};
  private static final byte[] FALSE_BYTES = {'f', 'a', 'l', 's', 'e'};
  private static final byte[] NULL_BYTES = {'n', 'u', 'l', 'l'};
  private static final byte[] HEX = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

  private JsonTape tape;
  private ByteSink out;
  /** (name token, start, end) of each top-level member value written, when recording. */
  private int[] spans = new int[48];
  private int spanCount;

  /**
   * Writes the document held by {@code tape}, through {@code projection}, to {@code sink}. When the root is an
   * object, the output ranges of its members' values are recorded (see {@link #memberCount()}).
   *
   * @return false when the projection left nothing (a scalar root and includes that do not select the root)
   */
  public boolean write(JsonTape source, JsonProjection projection, ByteSink sink) {
    tape = source;
    out = sink;
    spanCount = 0;
    int root = source.root();
    JsonProjection.Node include = projection.include;
    JsonProjection.Node exclude = projection.exclude;
    try {
      if (source.kind(root) == OBJECT) {
        writeRootObject(root, include, exclude);
        return true;
      }
      if (include == null && exclude == null) {
        value(root);
        return true;
      }
      if (!projected(root, include, exclude)) {
        if (source.kind(root) == ARRAY) {
          sink.write('[');
          sink.write(']');
          return true;
        }
        return false;
      }
      return true;
    } finally {
      tape = null;
      out = null;
    }
  }

  /** Number of top-level members recorded by the last {@link #write}. */
  public int memberCount() {
    return spanCount;
  }

  /** Name token of the i-th recorded top-level member (decode with {@link JsonTape#memberName}). */
  public int memberNameToken(int i) {
    return spans[3 * i];
  }

  /** Start offset in the sink of the i-th recorded member's canonical value. */
  public int memberValueStart(int i) {
    return spans[3 * i + 1];
  }

  /** End offset (exclusive) in the sink of the i-th recorded member's canonical value. */
  public int memberValueEnd(int i) {
    return spans[3 * i + 2];
  }

  private void record(int nameToken, int start, int end) {
    if (3 * spanCount + 3 > spans.length) {
      spans = Arrays.copyOf(spans, spans.length * 2);
    }
    spans[3 * spanCount] = nameToken;
    spans[3 * spanCount + 1] = start;
    spans[3 * spanCount + 2] = end;
    spanCount++;
  }

  private void writeRootObject(int t, JsonProjection.Node include, JsonProjection.Node exclude) {
    JsonTape tp = tape;
    ByteSink o = out;
    int count = tp.a(t);
    int offset = tp.c(t);
    int[] order = tp.order;
    o.write('{');
    boolean first = true;
    for (int i = 0; i < count; i++) {
      int name = order[offset + i];
      int memberMark = o.size();
      if (include == null && exclude == null) {
        if (!first) {
          o.write(',');
        }
        string(name);
        o.write(':');
        int start = o.size();
        value(name + 1);
        record(name, start, o.size());
        first = false;
        continue;
      }
      JsonProjection.Node in = null;
      if (include != null) {
        JsonProjection.Node c = include.member(tp, name);
        if (c == null) {
          continue;
        }
        in = c.terminal ? null : c;
      }
      JsonProjection.Node ex = null;
      if (exclude != null) {
        JsonProjection.Node c = exclude.member(tp, name);
        if (c != null) {
          if (c.terminal) {
            continue;
          }
          ex = c;
        }
      }
      if (!first) {
        o.write(',');
      }
      string(name);
      o.write(':');
      int start = o.size();
      if (!projected(name + 1, in, ex)) {
        o.truncate(memberMark);
        continue;
      }
      record(name, start, o.size());
      first = false;
    }
    o.write('}');
  }

  /** Writes the value at {@code t} through the projection; false (and nothing written) when nothing of it is kept. */
  private boolean projected(int t, JsonProjection.Node include, JsonProjection.Node exclude) {
    if (include == null && exclude == null) {
      value(t);
      return true;
    }
    JsonTape tp = tape;
    ByteSink o = out;
    int kind = tp.kind(t);
    if (kind == OBJECT) {
      int mark = o.size();
      int count = tp.a(t);
      int offset = tp.c(t);
      int[] order = tp.order;
      o.write('{');
      boolean first = true;
      for (int i = 0; i < count; i++) {
        int name = order[offset + i];
        JsonProjection.Node in = null;
        if (include != null) {
          JsonProjection.Node c = include.member(tp, name);
          if (c == null) {
            continue;
          }
          in = c.terminal ? null : c;
        }
        JsonProjection.Node ex = null;
        if (exclude != null) {
          JsonProjection.Node c = exclude.member(tp, name);
          if (c != null) {
            if (c.terminal) {
              continue;
            }
            ex = c;
          }
        }
        int memberMark = o.size();
        if (!first) {
          o.write(',');
        }
        string(name);
        o.write(':');
        if (!projected(name + 1, in, ex)) {
          o.truncate(memberMark);
          continue;
        }
        first = false;
      }
      if (first && include != null) {
        o.truncate(mark);
        return false;
      }
      o.write('}');
      return true;
    }
    if (kind == ARRAY) {
      int mark = o.size();
      int count = tp.a(t);
      o.write('[');
      boolean first = true;
      int child = t + 1;
      for (int i = 0; i < count; i++, child = tp.next(child)) {
        JsonProjection.Node in = null;
        if (include != null) {
          JsonProjection.Node c = include.element(i);
          if (c == null) {
            continue;
          }
          in = c.terminal ? null : c;
        }
        JsonProjection.Node ex = null;
        if (exclude != null) {
          JsonProjection.Node c = exclude.element(i);
          if (c != null) {
            if (c.terminal) {
              continue;
            }
            ex = c;
          }
        }
        int elementMark = o.size();
        if (!first) {
          o.write(',');
        }
        if (!projected(child, in, ex)) {
          o.truncate(elementMark);
          continue;
        }
        first = false;
      }
      if (first && include != null) {
        o.truncate(mark);
        return false;
      }
      o.write(']');
      return true;
    }
    if (include != null) {
      return false;
    }
    value(t);
    return true;
  }

  private void value(int t) {
    JsonTape tp = tape;
    ByteSink o = out;
    switch (tp.kind(t)) {
      case OBJECT: {
        int count = tp.a(t);
        int offset = tp.c(t);
        int[] order = tp.order;
        o.write('{');
        for (int i = 0; i < count; i++) {
          if (i > 0) {
            o.write(',');
          }
          int name = order[offset + i];
          string(name);
          o.write(':');
          value(name + 1);
        }
        o.write('}');
        break;
      }
      case ARRAY: {
        int count = tp.a(t);
        o.write('[');
        int child = t + 1;
        for (int i = 0; i < count; i++) {
          if (i > 0) {
            o.write(',');
          }
          value(child);
          child = tp.next(child);
        }
        o.write(']');
        break;
      }
      case STRING:
        string(t);
        break;
      case NUMBER:
        EcmaNumbers.writeDecimal(o, (tp.flags(t) & NEGATIVE) != 0, tp.numberDigits(t), tp.c(t));
        break;
      case NUMBER_DOUBLE:
        EcmaNumbers.write(Double.longBitsToDouble(tp.numberDigits(t)), o);
        break;
      case TRUE:
        o.write(TRUE_BYTES, 0, 4);
        break;
      case FALSE:
        o.write(FALSE_BYTES, 0, 5);
        break;
      case NULL:
        o.write(NULL_BYTES, 0, 4);
        break;
      default:
        throw new IllegalStateException("corrupt tape: kind " + tp.kind(t) + " at token " + t);
    }
  }

  private void string(int t) {
    JsonTape tp = tape;
    ByteSink o = out;
    byte[] src = tp.src;
    int start = tp.a(t);
    int end = tp.b(t);
    o.write('"');
    if ((tp.flags(t) & ESCAPED) == 0) {
      o.write(src, start, end - start);
      o.write('"');
      return;
    }
    int run = start;
    int p = start;
    while (p < end) {
      if (src[p] != '\\') {
        p++;
        continue;
      }
      o.write(src, run, p - run);
      byte e = src[p + 1];
      switch (e) {
        case '"': o.write('\\'); o.write('"'); p += 2; break;
        case '\\': o.write('\\'); o.write('\\'); p += 2; break;
        case '/': o.write('/'); p += 2; break;
        case 'b': o.write('\\'); o.write('b'); p += 2; break;
        case 'f': o.write('\\'); o.write('f'); p += 2; break;
        case 'n': o.write('\\'); o.write('n'); p += 2; break;
        case 'r': o.write('\\'); o.write('r'); p += 2; break;
        case 't': o.write('\\'); o.write('t'); p += 2; break;
        default: {
          int unit = JsonTape.hex4(src, p + 2);
          if (unit >= 0xD800 && unit <= 0xDBFF) {
            int low = JsonTape.hex4(src, p + 8);
            writeCodePoint(o, Character.toCodePoint((char) unit, (char) low));
            p += 12;
          } else {
            writeCodePoint(o, unit);
            p += 6;
          }
        }
      }
      run = p;
    }
    o.write(src, run, end - run);
    o.write('"');
  }

  /** Appends one code point as RFC 8785 wants it in a string: short escapes, {@code \\u00xx}, or UTF-8. */
  static void writeCodePoint(ByteSink o, int cp) {
    if (cp < 0x80) {
      if (cp >= 0x20 && cp != '"' && cp != '\\') {
        o.write(cp);
        return;
      }
      o.write('\\');
      switch (cp) {
        case '"': o.write('"'); return;
        case '\\': o.write('\\'); return;
        case '\b': o.write('b'); return;
        case '\f': o.write('f'); return;
        case '\n': o.write('n'); return;
        case '\r': o.write('r'); return;
        case '\t': o.write('t'); return;
        default:
          o.write('u');
          o.write('0');
          o.write('0');
          o.write(HEX[cp >> 4]);
          o.write(HEX[cp & 0xF]);
          return;
      }
    }
    writeUtf8(o, cp);
  }

  /** Appends {@code cp} encoded as UTF-8 (a surrogate code point gets its three-byte form, which is not UTF-8). */
  static void writeUtf8(ByteSink o, int cp) {
    if (cp < 0x80) {
      o.write(cp);
    } else if (cp < 0x800) {
      o.write(0xC0 | cp >> 6);
      o.write(0x80 | cp & 0x3F);
    } else if (cp < 0x10000) {
      o.write(0xE0 | cp >> 12);
      o.write(0x80 | cp >> 6 & 0x3F);
      o.write(0x80 | cp & 0x3F);
    } else {
      o.write(0xF0 | cp >> 18);
      o.write(0x80 | cp >> 12 & 0x3F);
      o.write(0x80 | cp >> 6 & 0x3F);
      o.write(0x80 | cp & 0x3F);
    }
  }
}
