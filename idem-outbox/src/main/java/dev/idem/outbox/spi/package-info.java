/**
 * The message side's store SPI: what an {@link dev.idem.outbox.Outbox}, an {@link dev.idem.outbox.OutboxRelay} and an
 * {@link dev.idem.outbox.Inbox} need from where their rows live. {@link dev.idem.outbox.spi.OutboxStore} and
 * {@link dev.idem.outbox.spi.InboxStore} are the hot paths; operator work (listing, replay, discard, purge, statistics)
 * is on {@link dev.idem.outbox.spi.OutboxAdmin} and {@link dev.idem.outbox.spi.InboxAdmin}, which a store hands out
 * from {@code admin()}.
 *
 * <p>The JDBC stores are in {@code idem-jdbc} ({@code JdbcOutboxStore}, {@code JdbcInboxStore}); in-memory ones, for
 * tests and examples, are in {@link dev.idem.outbox.memory}. Every implementation must pass the contract kits in
 * {@code idem-test} ({@code OutboxStoreContract}, {@code InboxStoreContract}).
 *
 * <p>Stores take the time from their caller ({@code now}): the facades own the clock.
 *
 * <p>Two hooks let an application's transactions in: {@link dev.idem.outbox.spi.InboxTransactions}, how an inbox opens
 * the transactions it runs itself (a framework's, so that the handler's own data access joins them), and {@link
 * dev.idem.outbox.spi.AfterCommit}, how work is run after the publishing transaction commits.
 */
package dev.idem.outbox.spi;
