/** The console's implementation: its JSON, its routes and its files. No one's contract. */
package dev.idem.console.internal;
