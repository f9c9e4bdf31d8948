/**
 * A real Kafka broker for tests ({@link dev.idem.test.kafka.KafkaBroker}), running in the test JVM, and a JUnit
 * Platform listener that stops it when the test session ends. Needs {@code org.apache.kafka:kafka-clients} and
 * {@code org.apache.kafka:kafka-test-common-runtime} on the test classpath.
 */
package dev.idem.test.kafka;
