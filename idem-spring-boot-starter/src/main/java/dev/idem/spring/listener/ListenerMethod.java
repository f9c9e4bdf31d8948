package dev.idem.spring.listener;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttributeSource;
import org.springframework.util.ClassUtils;

/**
 * One {@link IdempotentListener} method, read and checked once: its consumer, where each call's message id and payload
 * come from, and the broker whose container calls it. Immutable.
 */
final class ListenerMethod {
  private static final TransactionAttributeSource TRANSACTIONS = new AnnotationTransactionAttributeSource(false);
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();
  private static final String KAFKA_RECORD = "org.apache.kafka.clients.consumer.ConsumerRecord";
  private static final String AMQP_MESSAGE = "org.springframework.amqp.core.Message";
  private static final String SPRING_MESSAGE = "org.springframework.messaging.Message";
  private static final String KAFKA_RECORDS = "org.apache.kafka.clients.consumer.ConsumerRecords";
  private static final String KAFKA_ACKNOWLEDGMENT = "org.springframework.kafka.support.Acknowledgment";
  private static final String RABBIT_CHANNEL = "com.rabbitmq.client.Channel";
  private static final String KAFKA_LISTENER = "org.springframework.kafka.annotation.KafkaListener";
  private static final String RABBIT_LISTENER = "org.springframework.amqp.rabbit.annotation.RabbitListener";
  private static final String ASYNC = "org.springframework.scheduling.annotation.Async";
  /** Parameters of these packages are the container's (a channel, an acknowledgment), not the message's content. */
  private static final List<String> INFRASTRUCTURE = List.of("org.apache.kafka.", "com.rabbitmq.",
      "org.springframework.kafka.", "org.springframework.amqp.", "org.springframework.messaging.");

  /** The container that calls the method, as its annotations say. */
  enum Broker { KAFKA, RABBITMQ, OTHER }

  /** The kind of the raw message parameter. */
  enum Raw { KAFKA_RECORD, AMQP_MESSAGE, SPRING_MESSAGE }

  final Method method;
  final String source;
  final String consumer;
  final Broker broker;
  /** The method's {@code @Transactional} qualifier, "" for the default transaction manager, null without one. */
  final String transactionManager;
  private final Expression id;
  private final int rawIndex;
  private final Raw raw;
  private final boolean offsetId;
  private final boolean[] content;

  private ListenerMethod(Method method, String source, String consumer, Broker broker, String transactionManager,
      Expression id, int rawIndex, Raw raw, boolean offsetId, boolean[] content) {
    this.method = method;
    this.source = source;
    this.consumer = consumer;
    this.broker = broker;
    this.transactionManager = transactionManager;
    this.id = id;
    this.rawIndex = rawIndex;
    this.raw = raw;
    this.offsetId = offsetId;
    this.content = content;
  }

  /**
   * Whether giving up must throw Spring AMQP's "reject without requeue": a {@code @RabbitListener}, or a method
   * registered in code that takes an AMQP message (a bare exception would requeue it forever).
   */
  boolean rejectsAsAmqp() {
    return broker == Broker.RABBITMQ || raw == Raw.AMQP_MESSAGE;
  }

  /** Whether the payload is the arguments as JSON: the method takes no raw message. */
  boolean payloadIsJson() {
    return rawIndex < 0;
  }

  static String source(Class<?> type, Method method) {
    return type.getName() + "." + method.getName();
  }

  /**
   * Reads and checks {@code method} of {@code type}.
   *
   * @throws IllegalStateException naming the method and what to do, when it breaks a rule
   */
  static ListenerMethod of(Class<?> type, Method method, IdempotentListener a) {
    String source = source(type, method);
    String consumer = consumer(source, a.consumer());
    int modifiers = method.getModifiers();
    if (Modifier.isFinal(type.getModifiers()) || Modifier.isFinal(modifiers) || Modifier.isPrivate(modifiers)
        || Modifier.isStatic(modifiers)) {
      throw new IllegalStateException("@IdempotentListener on " + source + " must be on a method that is not final,"
          + " private or static, of a class that is not final: Spring calls it through a proxy, which cannot"
          + " intercept such a method, so its messages would not go through the inbox");
    }
    if (method.getReturnType() != void.class) {
      throw new IllegalStateException("@IdempotentListener on " + source + " must return void, not "
          + method.getGenericReturnType().getTypeName() + ": a duplicate skips the method and has nothing to"
          + " return (and a returned value would be sent on as a reply)");
    }
    if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(ASYNC)
        || MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(ASYNC)) {
      throw new IllegalStateException("@IdempotentListener on " + source + " is @Async (on the method or its class):"
          + " the call would return before its work ran, so the container would acknowledge the message before the"
          + " inbox's transaction even began, and a failure would lose it. Drop @Async: let the container's threads"
          + " run the method (raise its concurrency for more throughput)");
    }
    String transactionManager = checkJoinsTheInboxTransaction(type, method, source);
    Class<?>[] types = method.getParameterTypes();
    int rawIndex = -1;
    Raw raw = null;
    boolean[] content = new boolean[types.length];
    for (int i = 0; i < types.length; i++) {
      Raw kind = is(types[i], KAFKA_RECORD) ? Raw.KAFKA_RECORD : is(types[i], AMQP_MESSAGE) ? Raw.AMQP_MESSAGE
          : is(types[i], SPRING_MESSAGE) ? Raw.SPRING_MESSAGE : null;
      if (kind != null && raw == null) {
        rawIndex = i;
        raw = kind;
      }
      String name = types[i].getName();
      content[i] = INFRASTRUCTURE.stream().noneMatch(name::startsWith);
    }
    Expression id = null;
    if (!a.id().isBlank()) {
      try {
        id = PARSER.parseExpression(a.id());
      } catch (ParseException e) {
        throw new IllegalStateException("@IdempotentListener(id = \"" + a.id() + "\") on " + source
            + " is not a valid SpEL expression: " + e.getMessage(), e);
      }
    } else if (raw == null) {
      throw new IllegalStateException("@IdempotentListener on " + source + " has no source of message ids: take the"
          + " raw message as a parameter (a Kafka ConsumerRecord, an AMQP Message or a Spring Message<?>), or name"
          + " the id with @IdempotentListener(id = \"#order.id\")");
    }
    Broker broker = broker(type, method);
    checkAcknowledgesPerMessage(source, broker, method, types);
    if (a.offsetId() && broker == Broker.RABBITMQ) {
      throw new IllegalStateException("@IdempotentListener(offsetId = true) on " + source + " is a @RabbitListener:"
          + " a RabbitMQ message has no offset; take the id from the message id (an AMQP Message parameter) or name"
          + " it with @IdempotentListener(id = ...)");
    }
    if (a.offsetId() && raw != Raw.KAFKA_RECORD && raw != Raw.SPRING_MESSAGE) {
      throw new IllegalStateException("@IdempotentListener(offsetId = true) on " + source + " needs the Kafka record"
          + " as a parameter (a ConsumerRecord or a Spring Message<?>) to read its position from");
    }
    return new ListenerMethod(method, source, consumer, broker, transactionManager, id, rawIndex, raw, a.offsetId(),
        content);
  }

  /**
   * Each call must be one message, acknowledged by the container after the call returned: a batch would be one inbox
   * row for many messages, and an acknowledgment inside the method could commit the offset (Kafka) or remove the
   * message (RabbitMQ) before the inbox row commits, losing the message if the transaction then fails.
   */
  private static void checkAcknowledgesPerMessage(String source, Broker broker, Method method, Class<?>[] types) {
    for (Class<?> t : types) {
      if (is(t, KAFKA_ACKNOWLEDGMENT) || is(t, RABBIT_CHANNEL)) {
        throw new IllegalStateException("@IdempotentListener on " + source + " takes a " + t.getName()
            + " parameter: ack modes that ack inside the method are not supported (the ack could take effect"
            + " before the inbox's transaction commits, and a failure after it would lose the message). Drop the"
            + " parameter and use the container's RECORD or BATCH ack mode (Kafka) or AUTO acknowledge (RabbitMQ)");
      }
    }
    boolean batch = broker != Broker.OTHER && Arrays.stream(types).anyMatch(Collection.class::isAssignableFrom)
        || Arrays.stream(types).anyMatch(t -> is(t, KAFKA_RECORDS));
    for (String listener : List.of(KAFKA_LISTENER, RABBIT_LISTENER)) {
      MergedAnnotation<Annotation> on = MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).get(listener);
      batch |= on.isPresent() && on.getValue("batch", String.class).filter("true"::equals).isPresent();
    }
    if (batch) {
      throw new IllegalStateException("@IdempotentListener on " + source + " is a batch listener (batch = \"true\","
          + " or a List or ConsumerRecords parameter): batch listeners are not supported, each call must be one"
          + " message with one id. Listen to one record or message per call (if one message's body is a list,"
          + " wrap it in a type of your own)");
    }
  }

  private static String consumer(String source, String consumer) {
    if (consumer == null || consumer.isBlank()) {
      throw new IllegalStateException("@IdempotentListener on " + source + " needs a consumer name: "
          + "@IdempotentListener(consumer = \"billing\"), the scope of its message ids in the inbox");
    }
    if (consumer.length() > 255 || consumer.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalStateException("@IdempotentListener(consumer = ...) on " + source + " must be 1 to 255"
          + " characters without control characters, got " + consumer.length() + " characters");
    }
    return consumer;
  }

  /**
   * The method's writes must commit with the inbox row: its own {@code @Transactional} may join the transaction the
   * row is written in, not suspend it. Its transaction manager is checked once the beans exist.
   *
   * @return the {@code @Transactional} qualifier ("" for the default transaction manager), or null without one
   */
  private static String checkJoinsTheInboxTransaction(Class<?> type, Method method, String source) {
    TransactionAttribute tx = TRANSACTIONS.getTransactionAttribute(method, type);
    if (tx == null) {
      return null;
    }
    int propagation = tx.getPropagationBehavior();
    if (propagation == TransactionDefinition.PROPAGATION_REQUIRES_NEW
        || propagation == TransactionDefinition.PROPAGATION_NOT_SUPPORTED
        || propagation == TransactionDefinition.PROPAGATION_NEVER) {
      throw new IllegalStateException("@IdempotentListener on " + source + " is also @Transactional with a"
          + " propagation that leaves the inbox's transaction (REQUIRES_NEW, NOT_SUPPORTED or NEVER): its writes"
          + " would commit apart from the inbox row, and a redelivery could apply them twice. Use REQUIRED (the"
          + " default), or drop @Transactional: the method runs in the inbox's transaction already");
    }
    return tx.getQualifier() == null ? "" : tx.getQualifier();
  }

  private static Broker broker(Class<?> type, Method method) {
    MergedAnnotations onMethod = MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY);
    MergedAnnotations onType = MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY);
    if (onMethod.isPresent(KAFKA_LISTENER)
        || onMethod.isPresent("org.springframework.kafka.annotation.KafkaListeners")
        || onMethod.isPresent("org.springframework.kafka.annotation.KafkaHandler")
        && onType.isPresent(KAFKA_LISTENER)) {
      return Broker.KAFKA;
    }
    if (onMethod.isPresent(RABBIT_LISTENER)
        || onMethod.isPresent("org.springframework.amqp.rabbit.annotation.RabbitListeners")
        || onMethod.isPresent("org.springframework.amqp.rabbit.annotation.RabbitHandler")
        && onType.isPresent(RABBIT_LISTENER)) {
      return Broker.RABBITMQ;
    }
    return Broker.OTHER;
  }

  /** Whether {@code type} is, extends or implements the class named {@code name} (which may be absent). */
  private static boolean is(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      if (c.getName().equals(name)) {
        return true;
      }
    }
    return ClassUtils.getAllInterfacesForClassAsSet(type).stream().anyMatch(i -> i.getName().equals(name));
  }

  /** The message of one call: its id (null when it has none), where it came from (or null) and its payload. */
  record Delivery(String id, String source, byte[] payload, Object message) {}

  /**
   * The id or the payload of a message could not be computed (an id expression's bean failed, the payload could not
   * be written as JSON): the method's failure, to be tried again, not the message's. Carries the id when it was read.
   */
  static final class Unreadable extends RuntimeException {
    private final String id;

    Unreadable(String what, String id, RuntimeException cause) {
      super("the message's " + what + " could not be computed: " + cause, cause);
      this.id = id;
    }

    /** The message's id, or null when it was the id that failed. */
    String id() {
      return id;
    }
  }

  /**
   * The message of a call with {@code arguments}.
   *
   * @param json writes a value as JSON, for payloads that are not bytes or text
   * @throws IllegalArgumentException when the id header is not UTF-8: an id the inbox cannot hold
   * @throws Unreadable when anything else fails while computing the id or the payload
   */
  Delivery delivery(Object target, Object[] arguments, BeanFactory beans, Function<Object, byte[]> json) {
    Object message = rawIndex < 0 ? null : arguments[rawIndex];
    String messageId;
    try {
      messageId = id(message, target, arguments, beans);
    } catch (IllegalArgumentException e) {
      if (id != null) {
        throw new Unreadable("id (" + id.getExpressionString() + ")", null, e);
      }
      throw e;
    } catch (RuntimeException e) {
      throw new Unreadable("id", null, e);
    }
    if (messageId != null && messageId.isBlank()) {
      messageId = null;
    }
    try {
      return delivery(messageId, message, arguments, json);
    } catch (RuntimeException e) {
      throw new Unreadable("payload", messageId, e);
    }
  }

  private String id(Object message, Object target, Object[] arguments, BeanFactory beans) {
    if (id != null) {
      MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(target, method, arguments, NAMES);
      context.setBeanResolver(new BeanFactoryResolver(beans));
      Object value = id.getValue(context);
      return value == null ? null : value.toString();
    }
    if (message == null) {
      return null;
    }
    return switch (raw) {
      case KAFKA_RECORD -> KafkaRecords.id(message, offsetId);
      case AMQP_MESSAGE -> AmqpMessages.id(message);
      case SPRING_MESSAGE -> SpringMessages.id(message, offsetId);
    };
  }

  private Delivery delivery(String messageId, Object message, Object[] arguments, Function<Object, byte[]> json) {
    if (message == null) {
      return new Delivery(messageId, null, json.apply(content(arguments)), null);
    }
    return switch (raw) {
      case KAFKA_RECORD -> new Delivery(messageId, KafkaRecords.source(message),
          bytes(KafkaRecords.value(message), json), message);
      case AMQP_MESSAGE -> new Delivery(messageId, AmqpMessages.source(message), AmqpMessages.body(message),
          message);
      case SPRING_MESSAGE -> new Delivery(messageId, SpringMessages.source(message),
          bytes(SpringMessages.payload(message), json), message);
    };
  }

  /** The arguments that are the message's content, not the container's. */
  private List<Object> content(Object[] arguments) {
    List<Object> values = new ArrayList<>();
    for (int i = 0; i < arguments.length; i++) {
      if (content[i]) {
        values.add(arguments[i]);
      }
    }
    return values;
  }

  /** A body as the broker gave it: bytes as they are, text as UTF-8, anything else as JSON; none as no bytes. */
  private static byte[] bytes(Object value, Function<Object, byte[]> json) {
    if (value == null) {
      return new byte[0];
    }
    if (value instanceof byte[] b) {
      return b;
    }
    if (value instanceof String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    return json.apply(value);
  }
}
