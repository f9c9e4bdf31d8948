package dev.idem.spring.events;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an event class whose instances, published through Spring's {@code ApplicationEventPublisher} inside a
 * transaction, are written to the outbox in that transaction and relayed to {@link #value()}. Subclasses without an
 * annotation of their own inherit it.
 *
 * <pre>{@code
 * @Externalized(value = "webhook:payments", type = "payment.succeeded", key = "paymentId")
 * public record PaymentSucceeded(String paymentId, long amount) {}
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface Externalized {
  /**
   * The destination: {@code <route>} or {@code <route>:<detail>}; the route (before {@code ':'}) must be served by
   * an {@code OutboxRoute} bean when the application has any.
   */
  String value();

  /** The outbox event type, such as {@code payment.succeeded}; default the class's simple name. */
  String type() default "";

  /**
   * The ordering key: the name of a public method without parameters (a record component, or a getter without its
   * {@code get}) whose value, as text, orders the events of one key. The type must then be one of
   * {@code idem.outbox.ordered-types}. Default: no key, events are not ordered.
   */
  String key() default "";

  /** The aggregate type the key belongs to (at most 100 characters); default the event type. */
  String aggregate() default "";
}
