package dev.idem.spring.method;

import dev.idem.core.Codec;
import java.lang.reflect.Type;
import java.util.Objects;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;

/**
 * A {@link Codec} on a Jackson {@link ObjectMapper}, for one (generic) type: {@code List<Order>}, {@code Optional<..>}
 * and records come back as they went in. Thread-safe. The starter uses it, on the application's mapper, for the return
 * values of {@code @Idempotent} bean methods; plain {@link dev.idem.core.IdempotentCall}s can use it too.
 *
 * @param <T> the type of the value
 */
public final class JacksonCodec<T> implements Codec<T> {
  private final JavaType type;
  private final ObjectWriter writer;
  private final ObjectReader reader;

  private JacksonCodec(ObjectMapper mapper, JavaType type) {
    this.type = type;
    this.writer = mapper.writerFor(type);
    this.reader = mapper.readerFor(type);
  }

  /** A codec for {@code type}, such as a method's generic return type. */
  public static <T> JacksonCodec<T> of(ObjectMapper mapper, Type type) {
    Objects.requireNonNull(mapper, "mapper");
    return new JacksonCodec<>(mapper, mapper.constructType(Objects.requireNonNull(type, "type")));
  }

  @Override
  public String contentType() {
    return "application/json";
  }

  @Override
  public byte[] encode(T value) {
    return writer.writeValueAsBytes(value);
  }

  @Override
  public T decode(byte[] bytes) {
    return reader.readValue(bytes);
  }

  @Override
  public String toString() {
    return "JacksonCodec[" + type + "]";
  }
}
