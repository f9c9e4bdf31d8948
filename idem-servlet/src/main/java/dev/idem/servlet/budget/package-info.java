/**
 * A server-side retry budget: {@link dev.idem.servlet.budget.RetryBudgetFilter} (the entry point) keeps, over a
 * sliding window, the share of served requests that are retries (by the client's {@code Idempotency-Attempt} header)
 * and refuses retries past a maximum share with 503 {@code TRANSIENT.retry_budget_exhausted}, before any work is
 * done. {@link dev.idem.servlet.budget.RetryBudgetListener} hears its decisions. See
 * {@code docs/server-retry-budget.md}.
 */
package dev.idem.servlet.budget;
