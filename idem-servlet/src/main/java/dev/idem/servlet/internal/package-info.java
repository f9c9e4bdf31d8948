/**
 * The filter's machinery: request buffering, response capture, route templates. Not a public API; idem-webhook,
 * an Idem module, shares it.
 */
package dev.idem.servlet.internal;
