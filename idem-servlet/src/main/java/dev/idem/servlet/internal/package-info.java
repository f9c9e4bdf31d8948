/** The filter's machinery: request buffering, response capture, route templates. Not a public API. */
package dev.idem.servlet.internal;
