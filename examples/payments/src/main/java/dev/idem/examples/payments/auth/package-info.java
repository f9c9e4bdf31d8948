/**
 * Authentication: API keys map to tenants ({@link dev.idem.examples.payments.auth.ApiKeys}), the tenant becomes the
 * request's principal and so the idempotency scope ({@link dev.idem.examples.payments.auth.ApiKeyAuthentication}),
 * and admin routes are open to loopback callers or the admin key ({@link dev.idem.examples.payments.auth.AdminAccess}).
 */
package dev.idem.examples.payments.auth;
