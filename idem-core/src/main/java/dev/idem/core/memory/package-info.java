/** The in-memory store, {@link dev.idem.core.memory.InMemoryIdempotencyStore}: leased and phased modes only. */
package dev.idem.core.memory;
