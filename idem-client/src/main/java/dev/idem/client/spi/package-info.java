/**
 * Interfaces a user of idem-client implements: {@link dev.idem.client.spi.PendingJournal} (where pending intents are
 * kept; {@link dev.idem.client.FileJournal} is the built-in one) and {@link dev.idem.client.spi.AttemptListener}
 * (every attempt, for logs and meters). Both have no-op defaults.
 */
package dev.idem.client.spi;
