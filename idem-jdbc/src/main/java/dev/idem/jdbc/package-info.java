/**
 * Record stores on PostgreSQL, MariaDB/MySQL and H2. The entry point is
 * {@link dev.idem.jdbc.JdbcIdempotencyStore#builder(javax.sql.DataSource)}; inside atomic work,
 * {@link dev.idem.jdbc.JdbcTransaction#connectionOf} gives the transaction's {@code Connection}.
 */
package dev.idem.jdbc;
