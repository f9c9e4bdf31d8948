/**
 * The service's outbox: {@link dev.idem.examples.payments.outbox.OutboxConfiguration} defines the outbox, the inbox
 * and the relay (routes {@code webhook} to tenants, {@code provider-webhook} from the simulated provider, and
 * {@code kafka} when {@code payments.kafka.bootstrap-servers} is set),
 * {@link dev.idem.examples.payments.outbox.OutboxWork} runs the relay and the purges with the application, and
 * {@link dev.idem.examples.payments.outbox.OutboxAdminController} lets an operator list, replay and discard events.
 * Payments and refunds write their events through {@link dev.idem.examples.payments.outbox.TenantEvents}: to the
 * tenant's webhook endpoints and, when on, to Kafka ({@link dev.idem.examples.payments.outbox.KafkaEvents}).
 */
package dev.idem.examples.payments.outbox;
