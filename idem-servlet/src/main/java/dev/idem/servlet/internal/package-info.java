/**
 * The filter's machinery: request buffering, response capture, route templates. Not a public API, and no other
 * module uses it: what they need is public ({@link dev.idem.servlet.HttpBodies}, {@link dev.idem.servlet.Problem}).
 */
package dev.idem.servlet.internal;
