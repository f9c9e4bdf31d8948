/**
 * A small order service built from Idem's public API through the Spring Boot starter: an order is placed through an
 * {@code @Idempotent} service method ({@link dev.idem.examples.orders.OrderService#place}), payments arrive from
 * RabbitMQ through the inbox ({@link dev.idem.examples.orders.OrdersApplication#paymentSucceeded}), and each paid
 * order is announced as an {@link dev.idem.examples.orders.OrderConfirmed} event through the outbox.
 */
package dev.idem.examples.orders;
