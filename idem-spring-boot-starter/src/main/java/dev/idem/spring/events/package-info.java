/**
 * Domain events into the outbox for Spring applications: an event published through Spring's
 * {@code ApplicationEventPublisher} inside a transaction, whose class is {@link dev.idem.spring.events.Externalized}
 * or listed in {@code idem.events.routes}, is written to the outbox in that transaction and relayed to its route.
 * See {@link dev.idem.spring.events.IdemEventsAutoConfiguration}.
 */
package dev.idem.spring.events;
