/**
 * Spring's listener containers ({@code @RabbitListener}, {@code @KafkaListener}) with and without
 * {@code @IdempotentListener}, side by side: {@link dev.idem.bench.spring.listener.SpringListenerBench}.
 */
package dev.idem.bench.spring.listener;
