package dev.idem.spring.method;

import dev.idem.core.Codec;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Iterator;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.stream.BaseStream;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.deser.bean.BeanDeserializerBase;
import tools.jackson.databind.ser.impl.UnknownSerializer;

/** The codecs of {@code @Idempotent} methods on the application's Jackson mapper, checked when they are made. */
final class JacksonCodecs implements IdempotentMethod.Codecs {
  private final ObjectMapper mapper;

  JacksonCodecs(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  @Override
  public Codec<Object> codec(String source, Method method) {
    return codec(source, method, mapper);
  }

  /**
   * The codec of the method's generic return type; fails when Jackson could not keep a value of it, or not read it
   * back as the same type.
   */
  @SuppressWarnings("unchecked")
  private static Codec<Object> codec(String source, Method method, ObjectMapper mapper) {
    Class<?> raw = method.getReturnType();
    Type type = method.getGenericReturnType();
    if (raw == void.class || raw == Void.class) {
      return (Codec<Object>) (Codec<?>) JacksonCodec.of(mapper, Void.class);
    }
    if (raw == Object.class || Future.class.isAssignableFrom(raw) || CompletionStage.class.isAssignableFrom(raw)
        || BaseStream.class.isAssignableFrom(raw) || Iterator.class.isAssignableFrom(raw)
        || InputStream.class.isAssignableFrom(raw)) {
      throw new IllegalStateException("@Idempotent on " + source + ": its return type " + type.getTypeName()
          + " cannot be kept and given back as it was; return the value itself (a record, a class, a List<..>)");
    }
    JavaType javaType = mapper.constructType(type);
    String problem = null;
    try {
      if (mapper._serializationContext().findTypedValueSerializer(javaType, true) instanceof UnknownSerializer) {
        problem = "Jackson finds no property to write";
      } else if (!javaType.isContainerType() && !javaType.isPrimitive() && !javaType.isEnumType()
          && !javaType.isReferenceType()) {
        DeserializationContext context = mapper._deserializationContext();
        ValueDeserializer<Object> deserializer = context.findRootValueDeserializer(javaType);
        if (deserializer instanceof BeanDeserializerBase bean && !bean.getValueInstantiator().canInstantiate()) {
          problem = "Jackson cannot create an instance to read it back (no default constructor or @JsonCreator)";
        }
      }
    } catch (RuntimeException e) {
      problem = e.getMessage();
    }
    if (problem != null) {
      throw new IllegalStateException("@Idempotent on " + source + ": the application's ObjectMapper cannot keep"
          + " its return type " + type.getTypeName() + ": " + problem);
    }
    return (Codec<Object>) (Codec<?>) JacksonCodec.of(mapper, type);
  }

}
