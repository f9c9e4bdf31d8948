package dev.idem.examples.orders;

import dev.idem.spring.events.Externalized;

/**
 * Published when an order is paid. {@code @Externalized} makes it an outbox event of type {@code order.confirmed},
 * written in the transaction that marked the order paid, and sent by the relay's {@code rabbitmq} route to the
 * exchange {@code orders.events.exchange} with the routing key {@code order.confirmed}.
 *
 * @param orderId the order
 * @param paymentId the payment that paid it
 * @param customer who ordered
 * @param sku what was ordered
 * @param quantity how many
 */
@Externalized(value = "rabbitmq", type = "order.confirmed")
public record OrderConfirmed(String orderId, String paymentId, String customer, String sku, int quantity) {}
