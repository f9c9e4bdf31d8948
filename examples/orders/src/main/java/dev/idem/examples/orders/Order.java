package dev.idem.examples.orders;

/**
 * An order as the service answers it.
 *
 * @param id the order's id, chosen by the service
 * @param requestId the request id it was placed with
 * @param customer who ordered
 * @param sku what was ordered
 * @param quantity how many
 * @param status {@code PLACED}, then {@code PAID} once its payment arrived
 */
public record Order(String id, String requestId, String customer, String sku, int quantity, String status) {}
