/**
 * Spring Boot auto-configuration of the transactional outbox and the inbox (needs {@code dev.idem:idem-outbox}):
 * {@link dev.idem.spring.outbox.IdemOutboxAutoConfiguration} (outbox, inbox, relay with every
 * {@link dev.idem.spring.outbox.OutboxRoute} bean, purge, {@link dev.idem.spring.outbox.WebhookReceivers}) and
 * {@link dev.idem.spring.outbox.IdemOutboxMetricsAutoConfiguration} ({@link dev.idem.spring.outbox.OutboxMetrics}).
 * Properties: {@link dev.idem.spring.outbox.IdemOutboxProperties} ({@code idem.outbox.*}).
 */
package dev.idem.spring.outbox;
