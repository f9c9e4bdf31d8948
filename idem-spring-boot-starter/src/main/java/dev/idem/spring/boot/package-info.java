/**
 * Spring Boot auto-configuration of Idem: {@link dev.idem.spring.boot.IdemAutoConfiguration} (store, executor,
 * filter, transaction join, completer), {@link dev.idem.spring.boot.IdemMetricsAutoConfiguration} (Micrometer: the
 * executor's and the store's meters, the gauges of records in progress) and the {@code idempotency} actuator
 * endpoint. Properties: {@link dev.idem.spring.boot.IdemProperties}. Logs are in {@code dev.idem.spring.logging},
 * the retry meters in {@code dev.idem.spring.retry}.
 */
package dev.idem.spring.boot;
