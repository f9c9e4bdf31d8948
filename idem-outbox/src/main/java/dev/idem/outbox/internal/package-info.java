/** Implementation details of the outbox and inbox; not an API. */
package dev.idem.outbox.internal;
