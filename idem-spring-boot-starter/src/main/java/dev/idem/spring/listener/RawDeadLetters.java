package dev.idem.spring.listener;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Utils;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaOperations;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.serializer.SerializationUtils;

/**
 * The producer of the dead letters whose key or value failed deserialization ({@code ErrorHandlingDeserializer}).
 * Spring's recoverer publishes such a record with its raw bytes in place of what could not be read, which the
 * application's template cannot write unless its serializers take {@code byte[]} (Spring Boot's default
 * {@code StringSerializer} does not). This template is built on first use from the application's producer factory:
 * its configuration without a transactional id, and serializers that write a byte array as it is and anything else
 * as the application's own serializers do. It publishes outside the container's Kafka transaction, if there is one: a
 * record whose transaction then aborts is delivered again, fails again, and is dead-lettered a second time, never
 * lost. Its producer closes with the application context.
 */
final class RawDeadLetters implements DisposableBean {
  private final KafkaOperations<?, ?> template;
  private DefaultKafkaProducerFactory<Object, Object> factory; // guarded by this
  private KafkaTemplate<Object, Object> raw; // guarded by this
  private boolean closed; // guarded by this

  RawDeadLetters(KafkaOperations<?, ?> template) {
    this.template = template;
  }

  /** Whether Spring's recoverer publishes {@code record} with raw bytes in place of its key or its value. */
  static boolean failedDeserialization(ConsumerRecord<?, ?> record) {
    Headers headers = record.headers();
    return headers.lastHeader(SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER) != null
        || headers.lastHeader(SerializationUtils.KEY_DESERIALIZER_EXCEPTION_HEADER) != null;
  }

  /**
   * The template that writes raw bytes, or the application's own when its producer factory cannot be read (a
   * {@link KafkaOperations} other than a {@link KafkaTemplate}).
   */
  synchronized KafkaOperations<?, ?> template() {
    if (closed) {
      throw new IllegalStateException("the application context is closed");
    }
    if (raw != null) {
      return raw;
    }
    ProducerFactory<?, ?> source;
    try {
      source = template.getProducerFactory();
    } catch (UnsupportedOperationException e) {
      return template;
    }
    Map<String, Object> config = new HashMap<>(source.getConfigurationProperties());
    config.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
    Supplier<Serializer<Object>> key = serializer(source.getKeySerializerSupplier(), config,
        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
    Supplier<Serializer<Object>> value = serializer(source.getValueSerializerSupplier(), config,
        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
    factory = new DefaultKafkaProducerFactory<>(config, key, value);
    raw = new KafkaTemplate<>(factory);
    return raw;
  }

  @Override
  public synchronized void destroy() {
    closed = true;
    if (factory != null) {
      factory.destroy();
    }
  }

  @SuppressWarnings("unchecked")
  private static Supplier<Serializer<Object>> serializer(Supplier<? extends Serializer<?>> supplied,
      Map<String, Object> config, String name) {
    Object configured = config.get(name);
    return () -> {
      Serializer<?> own = supplied.get();
      if (own == null) {
        if (configured == null) {
          throw new IllegalStateException("the template's producer factory has no " + name);
        }
        own = configured instanceof Class<?> type
            ? Utils.newInstance(type, Serializer.class)
            : newInstance(String.valueOf(configured), name);
      }
      return new BytesAsTheyAre((Serializer<Object>) own);
    };
  }

  private static Serializer<?> newInstance(String type, String name) {
    try {
      return Utils.newInstance(type, Serializer.class);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(name + " names a class that is not on the class path: " + type, e);
    }
  }

  /** Writes a byte array as it is, and anything else with the application's serializer. */
  private static final class BytesAsTheyAre implements Serializer<Object> {
    private final Serializer<Object> own;

    BytesAsTheyAre(Serializer<Object> own) {
      this.own = own;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
      own.configure(configs, isKey);
    }

    @Override
    public byte[] serialize(String topic, Object data) {
      return data instanceof byte[] bytes ? bytes : own.serialize(topic, data);
    }

    @Override
    public byte[] serialize(String topic, Headers headers, Object data) {
      return data instanceof byte[] bytes ? bytes : own.serialize(topic, headers, data);
    }

    @Override
    public void close() {
      own.close();
    }
  }
}
