/**
 * Spring Boot auto-configuration of deadline propagation:
 * {@link dev.idem.spring.deadline.IdemDeadlineAutoConfiguration} registers
 * {@link dev.idem.servlet.deadline.DeadlineFilter} before the idempotency filter. Properties:
 * {@link dev.idem.spring.deadline.IdemDeadlineProperties} ({@code idem.server.deadline.*}).
 */
package dev.idem.spring.deadline;
