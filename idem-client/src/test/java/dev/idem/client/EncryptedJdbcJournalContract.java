package dev.idem.client;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import dev.idem.client.spi.PendingJournal;
import dev.idem.core.crypto.Encryption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;

/** {@link EncryptedJournalContract} on one database, in a table of its own (random suffix), dropped afterwards. */
abstract class EncryptedJdbcJournalContract extends EncryptedJournalContract {
  final String table = "idem_client_sealed_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

  abstract DataSource dataSource();

  @Override
  void reset() {
    dropTable();
  }

  @Override
  PendingJournal journal(Encryption encryption) {
    JdbcJournal.Builder b = JdbcJournal.builder(dataSource()).name("sealed-journal").table(table)
        .createSchemaIfMissing(true);
    return encryption == null ? b.build() : b.encryption(encryption).build();
  }

  @Override
  String rawText() throws SQLException {
    StringBuilder all = new StringBuilder();
    try (Connection c = dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT idem_key, method, uri, headers, body FROM " + table);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        for (int col = 1; col <= 4; col++) {
          all.append(rs.getString(col)).append('|');
        }
        all.append(new String(rs.getBytes(5), ISO_8859_1)).append('\n');
      }
    }
    return all.toString();
  }

  @Override
  byte[] rawBody(String key) throws SQLException {
    try (Connection c = dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT body FROM " + table + " WHERE idem_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("no row for " + key);
        }
        return rs.getBytes(1);
      }
    }
  }

  @Override
  void setRawBody(String key, byte[] body) throws SQLException {
    try (Connection c = dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET body = ? WHERE idem_key = ?")) {
      ps.setBytes(1, body);
      ps.setString(2, key);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("no row for " + key);
      }
    }
  }

  @AfterEach
  void dropTable() {
    JdbcJournalContractTest.dropTable(dataSource(), table);
  }
}
