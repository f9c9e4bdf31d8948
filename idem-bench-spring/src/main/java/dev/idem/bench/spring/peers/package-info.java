/**
 * Idem's store next to the peers' JDBC duplicate stores (Apache Camel's {@code JdbcMessageIdRepository}, Spring
 * Integration's {@code JdbcMetadataStore}) on PostgreSQL: {@link dev.idem.bench.spring.peers.PeerStoreBench}.
 */
package dev.idem.bench.spring.peers;
