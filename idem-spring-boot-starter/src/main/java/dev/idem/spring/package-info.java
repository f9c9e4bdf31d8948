/**
 * Idem for Spring: {@link dev.idem.spring.Idempotent} on handler methods. The auto-configuration lives in
 * {@code dev.idem.spring.boot}.
 */
package dev.idem.spring;
