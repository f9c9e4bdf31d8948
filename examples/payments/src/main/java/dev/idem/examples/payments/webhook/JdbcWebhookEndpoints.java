package dev.idem.examples.payments.webhook;

import dev.idem.core.crypto.Encryption;
import dev.idem.examples.payments.ResourceId;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.outbox.webhook.WebhookEndpoint;
import dev.idem.outbox.webhook.WebhookEndpoints;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.servlet.Problem;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The tenants' webhook endpoints ({@code pay_webhook_endpoint}), and the {@link WebhookEndpoints} the relay's
 * {@link dev.idem.outbox.webhook.WebhookTransport} looks them up in: a 410 Gone {@linkplain #disable disables} one.
 * Reads for the transport go to the table every time, so a disabled endpoint stops receiving at once. Thread-safe.
 *
 * <p>With an {@link Encryption}, the {@code secret} column holds each secret sealed and bound to its endpoint id
 * ({@link WebhookSecret#seal}); secrets stored in clear text before encryption was turned on are still read. A secret
 * that does not open makes {@link #find(String)} throw the {@link dev.idem.core.crypto.DecryptionException}, and the
 * transport gives up on the event (dead, never signed with another secret).
 */
public final class JdbcWebhookEndpoints implements WebhookEndpoints {
  private static final String COLUMNS = "SELECT id, tenant, url, events, enabled, created_at, disabled_reason"
      + " FROM pay_webhook_endpoint";
  private static final int MAX_REASON = 500;
  /** The width of the {@code secret} column. */
  private static final int SECRET_COLUMN = 200;

  private final DataSource dataSource;
  private final Clock clock;
  private final int maxPerTenant;
  private final Encryption encryption;

  /** Endpoints whose secrets are stored in clear text. */
  public JdbcWebhookEndpoints(DataSource dataSource, Clock clock, int maxPerTenant) {
    this(dataSource, clock, maxPerTenant, null);
  }

  /** Endpoints whose secrets are sealed with {@code encryption} (clear text when it is null). */
  public JdbcWebhookEndpoints(DataSource dataSource, Clock clock, int maxPerTenant, Encryption encryption) {
    this.dataSource = dataSource;
    this.clock = clock;
    this.maxPerTenant = maxPerTenant;
    this.encryption = encryption;
  }

  /** A created endpoint and its secret, which is shown this once. */
  public record Created(WebhookSubscription endpoint, WebhookSecret secret) {}

  /**
   * Creates an enabled endpoint with a new secret.
   *
   * @throws ApiProblem 422 {@code VALIDATION.webhook_endpoint_limit} when the tenant has as many enabled endpoints
   *     as allowed (checked before the insert: concurrent creations may pass the limit by a few)
   */
  public Created create(String tenant, NewWebhookEndpoint request) throws SQLException {
    WebhookSecret secret = WebhookSecret.generate();
    WebhookSubscription endpoint = new WebhookSubscription(ResourceId.next("we"), tenant, request.url().toString(),
        request.events(), true, Instant.ofEpochMilli(clock.millis()), null);
    String stored = encryption == null ? secret.reveal() : secret.seal(encryption, endpoint.id());
    if (stored.length() > SECRET_COLUMN) {
      throw new IllegalStateException("the sealed secret is " + stored.length() + " characters, wider than"
          + " pay_webhook_endpoint.secret (" + SECRET_COLUMN + "): use key ids of at most 14 characters");
    }
    try (Connection c = dataSource.getConnection()) {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT COUNT(*) FROM pay_webhook_endpoint WHERE tenant = ? AND enabled = ?")) {
        ps.setString(1, tenant);
        ps.setBoolean(2, true);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (rs.getLong(1) >= maxPerTenant) {
            throw new ApiProblem(Problem.of(422, "VALIDATION.webhook_endpoint_limit", "Too many webhook endpoints")
                .withDetail("a tenant may have at most " + maxPerTenant + " enabled webhook endpoints"));
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_webhook_endpoint (id, tenant, url, events,"
          + " secret, enabled, created_at, disabled_reason) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)")) {
        ps.setString(1, endpoint.id());
        ps.setString(2, tenant);
        ps.setString(3, endpoint.url());
        ps.setString(4, String.join(",", endpoint.events()));
        ps.setString(5, stored);
        ps.setBoolean(6, true);
        ps.setLong(7, endpoint.createdAt().toEpochMilli());
        ps.executeUpdate();
      }
    }
    return new Created(endpoint, secret);
  }

  /** The tenant's endpoints, oldest first. */
  public List<WebhookSubscription> list(String tenant) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(COLUMNS + " WHERE tenant = ? ORDER BY created_at, id")) {
      ps.setString(1, tenant);
      List<WebhookSubscription> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next() && out.size() < 1000) {
          out.add(read(rs));
        }
      }
      return out;
    }
  }

  /** The endpoint, if it is the tenant's. */
  public Optional<WebhookSubscription> find(String tenant, String id) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(COLUMNS + " WHERE id = ? AND tenant = ?")) {
      ps.setString(1, id);
      ps.setString(2, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    }
  }

  /**
   * The ids of the tenant's enabled endpoints that receive {@code type}, read on the caller's connection (in the
   * transaction that writes the events).
   */
  public List<String> subscribers(Connection c, String tenant, String type) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(COLUMNS + " WHERE tenant = ? AND enabled = ? ORDER BY id")) {
      ps.setString(1, tenant);
      ps.setBoolean(2, true);
      List<String> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          WebhookSubscription s = read(rs);
          if (s.receives(type)) {
            out.add(s.id());
          }
        }
      }
      return out;
    }
  }

  // ---------------------------------------------------------------- WebhookEndpoints, for the transport

  @Override
  public Optional<WebhookEndpoint> find(String id) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT id, url, secret, enabled FROM pay_webhook_endpoint"
            + " WHERE id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new WebhookEndpoint(rs.getString(1), URI.create(rs.getString(2)),
            List.of(WebhookSecret.fromStored(rs.getString(3), encryption, id)), rs.getBoolean(4)));
      }
    } catch (SQLException e) {
      // the transport counts an exception as a failed attempt, retried later: never as "no such endpoint"
      throw new IllegalStateException("reading webhook endpoint " + id + " failed (SQLState " + e.getSQLState()
          + "): " + e.getMessage(), e);
    }
  }

  @Override
  public void disable(String id, String reason) {
    String kept = reason == null ? "disabled" : reason.length() <= MAX_REASON ? reason
        : reason.substring(0, MAX_REASON);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE pay_webhook_endpoint SET enabled = ?, disabled_reason = ?"
            + " WHERE id = ? AND enabled = ?")) {
      ps.setBoolean(1, false);
      ps.setString(2, kept);
      ps.setString(3, id);
      ps.setBoolean(4, true);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("disabling webhook endpoint " + id + " failed (SQLState " + e.getSQLState()
          + "): " + e.getMessage(), e);
    }
  }

  private static WebhookSubscription read(ResultSet rs) throws SQLException {
    return new WebhookSubscription(rs.getString(1), rs.getString(2), rs.getString(3),
        Arrays.asList(rs.getString(4).split(",")), rs.getBoolean(5), Instant.ofEpochMilli(rs.getLong(6)),
        rs.getString(7));
  }

  @Override
  public String toString() {
    return "JdbcWebhookEndpoints[pay_webhook_endpoint, at most " + maxPerTenant + " per tenant"
        + (encryption == null ? "" : ", secrets sealed") + "]";
  }
}
