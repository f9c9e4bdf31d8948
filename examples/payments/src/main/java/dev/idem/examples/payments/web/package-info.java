/**
 * HTTP plumbing of the payments service: JSON reading and writing, and RFC 9457 problem documents for every error
 * ({@link dev.idem.examples.payments.web.ProblemAdvice}).
 */
package dev.idem.examples.payments.web;
