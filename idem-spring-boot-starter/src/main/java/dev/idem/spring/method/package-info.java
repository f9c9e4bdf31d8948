/**
 * {@link dev.idem.spring.Idempotent} on methods of any Spring bean, not only controllers: an AOP interceptor turns
 * each call into an {@link dev.idem.core.IdempotentCall} whose key, scope and fingerprint come from the arguments,
 * and whose return value is kept through the application's Jackson mapper ({@link JacksonCodec}). Registered by
 * {@link IdemMethodAutoConfiguration}. See docs/methods.md.
 */
package dev.idem.spring.method;
