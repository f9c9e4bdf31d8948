/**
 * The vocabulary of Idem's HTTP contract, shared by the server filters, the client, the starter and the tools: the
 * header names ({@link dev.idem.core.protocol.IdemHeaders}) and the problem codes
 * ({@link dev.idem.core.protocol.ProblemCode}). No dependencies.
 */
package dev.idem.core.protocol;
