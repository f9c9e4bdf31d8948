/**
 * Account profiles: {@code PUT /accounts/{id}} creates ({@code If-None-Match: *}) or replaces ({@code If-Match}) a
 * tenant's account profile, each as one atomic statement, and {@code GET /accounts/{id}} reads it with its
 * {@code ETag}. The entry point is {@link dev.idem.examples.payments.account.AccountController}.
 */
package dev.idem.examples.payments.account;
