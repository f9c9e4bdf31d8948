/**
 * The {@code idem} command line, run through the {@code ./idem} launcher at the repository root.
 *
 * <p>Entry point: {@link dev.idem.cli.Main}, which dispatches {@code idem <command> [options]} to one
 * {@code Command} per subcommand ({@code fingerprint} today). {@link dev.idem.cli.Main#run} runs it in-process with
 * given streams and returns the exit status, for tests.
 */
package dev.idem.cli;
