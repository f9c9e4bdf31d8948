package dev.idem.examples.payments.web;

/**
 * Text that every database the service runs on can store. PostgreSQL refuses a NUL (U+0000) in text with an error,
 * and no database can store half of a surrogate pair, which has no UTF-8 form; the service refuses both with a 400
 * before any work instead of meeting the database's error. Every other character, control characters included, is
 * the domain's to judge. Stateless.
 */
public final class StorableText {
  private StorableText() {}

  /** The index of the first character that cannot be stored (a NUL or an unpaired surrogate), or -1 for none. */
  public static int firstUnstorable(CharSequence s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\0') {
        return i;
      }
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * What is wrong at {@code at}, an index {@link #firstUnstorable} found, for a problem's detail: names the
   * character's code, never the text around it.
   */
  public static String describe(CharSequence s, int at) {
    char c = s.charAt(at);
    String what = c == '\0' ? "a NUL character (U+0000)"
        : String.format("an unpaired surrogate (U+%04X)", (int) c);
    return what + " at position " + at + ", which the service cannot store";
  }
}
