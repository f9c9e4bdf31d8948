/**
 * What users need to test their own code with Idem: the store contract test kit
 * ({@link dev.idem.test.IdempotencyStoreContract}, {@link dev.idem.test.IdemExecutorContract}) that every store must
 * pass, the outbox and inbox store kits and the outbox transport kit in {@link dev.idem.test.outbox}, the HTTP
 * contract kit {@link dev.idem.test.http.HttpContractKit}, a {@link dev.idem.test.MutableClock}, and fixtures for tests
 * against real servers:
 * {@link dev.idem.test.TestPostgres} (the local PostgreSQL and an effect table that shows duplicates as extra rows) and
 * {@link dev.idem.test.kafka.KafkaBroker} (a Kafka broker in the test JVM), and outages on demand:
 * {@link dev.idem.test.DatabaseOutage} (a data source that refuses connections) and {@link dev.idem.test.TcpProxy} (a
 * proxy in front of a local server that drops and refuses connections until told otherwise). The fixtures' libraries
 * (HikariCP, Kafka's test kit) are optional dependencies: add them to your test classpath to use them.
 */
package dev.idem.test;
