/**
 * Conditional requests (RFC 9110 section 13) for optimistic concurrency: {@link dev.idem.servlet.conditional.ETag}
 * (a strong tag per resource version), {@link dev.idem.servlet.conditional.Preconditions} (the entry point: evaluates
 * {@code If-Match} / {@code If-None-Match} and answers 304, 412 {@code CONFLICT.precondition_failed} or 428
 * {@code VALIDATION.precondition_required}) and {@link dev.idem.servlet.conditional.VersionCondition} (the same
 * preconditions as one atomic {@code UPDATE ... WHERE version = ?}). Framework-free: Jakarta Servlet only.
 *
 * <p>Use {@code PUT}/{@code PATCH} with {@code If-Match} to change a resource that exists (it prevents lost updates;
 * a retry after a success gets 412, never a second change), and {@code POST} with an {@code Idempotency-Key} to
 * create one (it prevents duplicates; a retry replays the first answer). See {@code docs/conditional-requests.md}.
 */
package dev.idem.servlet.conditional;
