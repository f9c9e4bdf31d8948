/**
 * Request fingerprints: what makes two requests with the same idempotency key "the same request".
 *
 * <p>Entry point: {@link dev.idem.core.fingerprint.Fingerprinter#of(FingerprintPolicy)} with a
 * {@link dev.idem.core.fingerprint.FingerprintPolicy} (whole body by default; include or exclude JSON Pointers),
 * then {@link dev.idem.core.fingerprint.Fingerprinter#fingerprint(String, byte[], String)} per request. JSON bodies
 * are hashed in RFC 8785 canonical form ({@link dev.idem.core.fingerprint.JsonCanonicalizer}), so member order,
 * whitespace and number spelling do not matter; other bodies are hashed as bytes. See {@code docs/fingerprint.md}.
 */
package dev.idem.core.fingerprint;
