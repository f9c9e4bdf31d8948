/**
 * Spring Boot auto-configuration of the server retry budget:
 * {@link dev.idem.spring.budget.IdemRetryBudgetAutoConfiguration} (the entry point) registers
 * {@link dev.idem.servlet.budget.RetryBudgetFilter} when {@code idem.server.retry-budget.enabled=true}, with
 * {@link dev.idem.spring.budget.RetryBudgetMeters}. Properties: {@link dev.idem.spring.budget.RetryBudgetProperties}
 * ({@code idem.server.retry-budget.*}).
 */
package dev.idem.spring.budget;
