/**
 * Domain events into the outbox: {@link dev.idem.outbox.events.Events} turns an application's event objects into
 * outbox events, written in the transaction that publishes them and relayed to the destination its
 * {@link dev.idem.outbox.events.EventRoute} names for their class. The payload is what the application's
 * {@link dev.idem.outbox.events.EventSerializer} makes of the object (the Spring Boot starter plugs in Jackson).
 */
package dev.idem.outbox.events;
