/**
 * Idem's logs through SLF4J with the MDC keys of {@link dev.idem.spring.logging.IdemMdc} ({@code idempotency_key},
 * {@code scope}, {@code operation}, {@code attempt}, {@code from_state}, {@code to_state}, {@code error_code}):
 * {@link dev.idem.spring.logging.Slf4jIdemListener} for the executor's and the completer's lines, and
 * {@link dev.idem.spring.logging.IdemMdcFilter} for every line logged during a request. Auto-configured by
 * {@link dev.idem.spring.logging.IdemLoggingAutoConfiguration} (the entry point; {@code idem.logging.*}).
 */
package dev.idem.spring.logging;
