package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Turns the return value of an idempotent call into the bytes a record keeps, and those bytes back into the value a
 * duplicate gets ({@link IdempotentCall}). Implementations are thread-safe. Core ships only codecs that need no
 * library ({@link #bytes()}, {@link #utf8()}); the Spring Boot starter brings one on the application's Jackson
 * {@code ObjectMapper}.
 *
 * <p>A {@code null} value never reaches a codec: the call keeps it as "no value" and a duplicate gets {@code null}.
 *
 * @param <T> the type of the value
 */
public interface Codec<T> {

  /** The media type of the encoded bytes, such as {@code application/json}; kept with them. */
  String contentType();

  /**
   * The bytes to keep for {@code value} (never {@code null}).
   *
   * @throws RuntimeException when the value cannot be encoded; the call then fails and its key is freed
   */
  byte[] encode(T value);

  /** The value {@link #encode} was given, read back from its bytes. */
  T decode(byte[] bytes);

  /** Keeps byte arrays as they are ({@code application/octet-stream}). */
  static Codec<byte[]> bytes() {
    return new Codec<>() {
      @Override
      public String contentType() {
        return "application/octet-stream";
      }

      @Override
      public byte[] encode(byte[] value) {
        return Objects.requireNonNull(value, "value").clone();
      }

      @Override
      public byte[] decode(byte[] bytes) {
        return bytes.clone();
      }
    };
  }

  /** Keeps strings as UTF-8 text ({@code text/plain; charset=utf-8}). */
  static Codec<String> utf8() {
    return new Codec<>() {
      @Override
      public String contentType() {
        return "text/plain; charset=utf-8";
      }

      @Override
      public byte[] encode(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
      }

      @Override
      public String decode(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
      }
    };
  }
}
