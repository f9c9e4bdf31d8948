/**
 * Idem for Spring: {@link dev.idem.spring.Idempotent} on handler methods (HTTP routes, through the servlet filter) and
 * on methods of any other bean (idempotent calls, through {@code dev.idem.spring.method}). The auto-configuration
 * lives in {@code dev.idem.spring.boot}; see docs/methods.md for bean methods.
 */
package dev.idem.spring;
