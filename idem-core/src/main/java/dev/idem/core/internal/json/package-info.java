/**
 * Internal: a small, strict JSON (I-JSON, RFC 7493) parser and the RFC 8785 canonical writer, with no dependencies.
 * Not part of the public API; may change in any release.
 *
 * <p>Entry points: {@link dev.idem.core.internal.json.JsonParser} (text to a tree of {@code Map}/{@code List}/
 * {@code String}/{@code Double}/{@code Boolean}/{@link dev.idem.core.internal.json.JsonNull}),
 * {@link dev.idem.core.internal.json.JsonWriter} (such a tree to canonical JSON), and, for the fingerprint hot path,
 * {@link dev.idem.core.internal.json.JsonTape} with {@link dev.idem.core.internal.json.CanonicalWriter}, which
 * canonicalise straight from the source bytes.
 */
package dev.idem.core.internal.json;
