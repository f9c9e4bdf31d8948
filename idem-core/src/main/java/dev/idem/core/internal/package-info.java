/** The executor's implementation. Not API: anything here may change in any release. */
package dev.idem.core.internal;
