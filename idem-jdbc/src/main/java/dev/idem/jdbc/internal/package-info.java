/** SQL, error classification, schema scripts and the column codec. Not API. */
package dev.idem.jdbc.internal;
