/**
 * Spring Boot auto-configuration of Idem: {@link dev.idem.spring.boot.IdemAutoConfiguration} (store, executor,
 * filter, transaction join, completer), {@link dev.idem.spring.boot.IdemMetricsAutoConfiguration} (Micrometer) and
 * the {@code idempotency} actuator endpoint. Properties: {@link dev.idem.spring.boot.IdemProperties}.
 */
package dev.idem.spring.boot;
