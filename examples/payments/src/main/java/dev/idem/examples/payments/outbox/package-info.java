/**
 * The service's outbox: {@link dev.idem.examples.payments.outbox.OutboxConfiguration} defines the outbox, the inbox
 * and the relay (routes {@code webhook} to tenants, {@code provider-webhook} from the simulated provider),
 * {@link dev.idem.examples.payments.outbox.OutboxWork} runs the relay and the purges with the application, and
 * {@link dev.idem.examples.payments.outbox.OutboxAdminController} lets an operator list, replay and discard events.
 */
package dev.idem.examples.payments.outbox;
