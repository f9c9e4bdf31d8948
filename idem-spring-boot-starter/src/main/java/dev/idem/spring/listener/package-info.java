/**
 * Exactly-once effects for Spring's own message listeners: {@link dev.idem.spring.listener.IdempotentListener} next to
 * {@code @KafkaListener} or {@code @RabbitListener} runs the method through Idem's inbox, in a transaction that commits
 * before the container acknowledges the message or commits its offset.
 * {@link dev.idem.spring.listener.IdemListenersAutoConfiguration} applies it; properties:
 * {@link dev.idem.spring.listener.IdemListenersProperties};
 * {@link dev.idem.spring.listener.IdemListenersCheckAutoConfiguration} fails the start when the annotation would be
 * ignored. See docs/listeners.md.
 */
package dev.idem.spring.listener;
