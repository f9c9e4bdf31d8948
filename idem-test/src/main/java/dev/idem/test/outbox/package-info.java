/**
 * The contract kits of the message side: its stores' {@link dev.idem.test.outbox.OutboxStoreContract} and
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
 * the database's own view of lock waits. An inbox store that offers the first-delivery order ({@code recordsLast()})
 * extends {@link dev.idem.test.outbox.RecordingLastInboxStoreContract} instead, which adds its tests of
 * {@code recordLast}. The kits pass the time to the stores and never sleep; a test that needs a
 * server that is down fails.
 *
 * <p>{@link dev.idem.test.outbox.OutboxTransportContract} is the kit of the other side of the relay: every
 * {@link dev.idem.outbox.OutboxTransport} must pass it, on its real broker or endpoint. Extend it with destinations of
 * the test's own (fresh names from {@code uniqueName}), a way to read back what arrived there and a way to take one
 * down and bring it back:
 *
 * <pre>{@code
 * class MyTransportContractTest extends OutboxTransportContract {
 *   @Override protected String createDestination() { return "mq:" + declareQueue(uniqueName("kit-")); }
 *   @Override protected OutboxTransport createTransport() { return new MyTransport(connectionFactory()); }
 *   @Override protected List<Received> received(String destination) { return readAll(destination); }
 *   @Override protected void startOutage(String destination) { deleteQueue(destination); }
 *   @Override protected void endOutage(String destination) { declareQueue(destination); }
 *   @Override protected void deleteDestination(String destination) { deleteQueue(destination); }
 * }
 * }</pre>
 *
 * <p>It checks message ids, payloads, headers and keys as they arrive, one result per message of a batch in order,
 * per-aggregate order, redeliveries, outages (never a delivered result for a message that did not arrive) and the
 * recovery after them, and concurrent senders. What a transport may not promise is a capability to override
 * ({@code ordersPerAggregate}, {@code keysByAggregate}, {@code dropsDuplicates}, {@code isolatesFailures},
 * {@code outageKind}); arrivals are polled up to a bound, nothing sleeps to decide a race.
 *
 * <p>{@link dev.idem.test.outbox.InboxConsumerContract} is the kit of the broker consumers (see its class notes).
 */
package dev.idem.test.outbox;
