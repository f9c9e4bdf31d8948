package dev.idem.spring.method;

import dev.idem.core.Codec;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.stream.BaseStream;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.deser.AbstractDeserializer;
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
    String problem;
    try {
      problem = problem(mapper, javaType, new HashSet<>());
    } catch (RuntimeException e) {
      problem = e.getMessage();
    }
    if (problem != null) {
      throw new IllegalStateException("@Idempotent on " + source + ": the application's ObjectMapper cannot keep"
          + " its return type " + type.getTypeName() + ": " + problem);
    }
    return (Codec<Object>) (Codec<?>) JacksonCodec.of(mapper, type);
  }

  /**
   * Why Jackson could not keep a value of {@code type} and read it back as it was, or null: the type itself, and the
   * element, value and key types of a container ({@code List<..>}, {@code Map<..>}, arrays, {@code Optional<..>}),
   * down to the leaves. {@code Object} inside a container is read back as JSON's own types (maps, lists, strings,
   * numbers) and passes; an abstract type or an interface passes only with type information ({@code @JsonTypeInfo})
   * or a deserializer of its own.
   */
  private static String problem(ObjectMapper mapper, JavaType type, Set<JavaType> seen) {
    if (!seen.add(type) || type.isPrimitive() || type.isEnumType() || type.hasRawClass(Object.class)) {
      return null;
    }
    DeserializationContext context = mapper._deserializationContext();
    if (type.isContainerType() || type.isReferenceType()) {
      if (type.isMapLikeType()) {
        JavaType key = type.getKeyType();
        try {
          context.findKeyDeserializer(key, null);
        } catch (RuntimeException e) {
          return "Jackson cannot read back its map keys of " + key.toCanonical() + " (" + e.getMessage() + ")";
        }
        if (key.isAbstract() && !key.isEnumType() && !key.hasRawClass(Object.class)) {
          return "its map key type " + key.toCanonical() + " is abstract";
        }
      }
      JavaType content = type.getContentType();
      return content == null ? null : problem(mapper, content, seen);
    }
    if (mapper._serializationContext().findTypedValueSerializer(type, true) instanceof UnknownSerializer) {
      return "Jackson finds no property to write in " + type.toCanonical();
    }
    if (type.isAbstract()) {
      if (context.findTypeDeserializer(type) != null) {
        return null;
      }
      ValueDeserializer<Object> deserializer = context.findRootValueDeserializer(type);
      if (deserializer instanceof AbstractDeserializer
          || deserializer instanceof BeanDeserializerBase bean && !bean.getValueInstantiator().canInstantiate()) {
        return type.toCanonical() + " is abstract (or an interface) and carries no type information"
            + " (@JsonTypeInfo): Jackson cannot tell which class to read it back as";
      }
      return null;
    }
    ValueDeserializer<Object> deserializer = context.findRootValueDeserializer(type);
    if (deserializer instanceof BeanDeserializerBase bean && !bean.getValueInstantiator().canInstantiate()) {
      return "Jackson cannot create an instance of " + type.toCanonical() + " to read it back (no default"
          + " constructor or @JsonCreator)";
    }
    return null;
  }

}
