-- The service's own table (Idem's tables come from idem-jdbc: idem.store.initialize-schema and
-- idem.outbox.initialize-schema). Written for both H2 and PostgreSQL.
CREATE TABLE IF NOT EXISTS orders (
  id VARCHAR(36) PRIMARY KEY,
  request_id VARCHAR(255) NOT NULL,
  customer VARCHAR(100) NOT NULL,
  sku VARCHAR(64) NOT NULL,
  quantity INT NOT NULL,
  status VARCHAR(16) NOT NULL,
  payment_id VARCHAR(255)
);
