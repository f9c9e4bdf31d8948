/**
 * The contract kits of the message side's stores: {@link dev.idem.test.outbox.OutboxStoreContract} and
 * {@link dev.idem.test.outbox.InboxStoreContract}, abstract JUnit 5 classes that every
 * {@link dev.idem.outbox.spi.OutboxStore} and {@link dev.idem.outbox.spi.InboxStore} must pass. To run them against a
 * store of your own, extend each in your test sources and return a fresh store from {@code createStore()}:
 *
 * <pre>{@code
 * class MyOutboxStoreContractTest extends OutboxStoreContract {
 *   @Override protected OutboxStore createStore() { return new MyOutboxStore(freshTable()); }
 *   @Override protected void closeStore(OutboxStore store) { dropTable(store); }
 * }
 *
 * class MyInboxStoreContractTest extends InboxStoreContract {
 *   @Override protected InboxStore createStore() { return new MyInboxStore(freshTable()); }
 *   @Override protected void closeStore(InboxStore store) { dropTable(store); }
 * }
 * }</pre>
 *
 * <p>Each test needs a store of its own with nothing in it: claims, listings, statistics and purges see the whole
 * store. On a shared database, give every store its own table (a random name) and drop it in {@code closeStore}.
 * Override {@code historyLimit()} when your outbox keeps another number of failed attempts than 20, and, for a store
 * on a database, {@code session(tx)} and {@code awaitBlocked(...)} of the inbox kit so that its two waiting tests read
 * the database's own view of lock waits. The kits pass the time to the stores and never sleep; a test that needs a
 * server that is down fails.
 * <p>{@link dev.idem.test.outbox.InboxConsumerContract} is the kit of the broker consumers (see its class notes).
 */
package dev.idem.test.outbox;
