package dev.idem.examples.plainservlet;

import dev.idem.core.UuidV7;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.IdempotentExchange;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * {@code POST /orders} inserts an order and answers 201 with its id; {@code GET /orders} lists the tenant's orders
 * and {@code GET /orders/{id}} shows one. The request body is any JSON object; it is kept as it was sent.
 *
 * <p>The POST runs inside the filter's atomic execution: the handler writes through
 * {@link IdempotentExchange#transaction()}, the connection the idempotency record is inserted on, and never
 * commits or closes it. The filter commits the order and the record together, or rolls both back.
 */
final class OrdersServlet extends HttpServlet {
  /** The example's own problem codes; Idem's come from {@link ProblemCode}. */
  static final ProblemCode NOT_AN_ORDER = ProblemCode.of("VALIDATION.order", 400, false, "An order is a JSON object");
  static final ProblemCode NO_SUCH_ORDER = ProblemCode.of("NOT_FOUND.order", 404, false, "No such order");
  private static final long serialVersionUID = 1L;
  private final transient DataSource dataSource;

  OrdersServlet(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  @Override
  protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    if (req.getPathInfo() != null) {
      resp.sendError(405);
      return;
    }
    IdempotentExchange exchange = IdempotentExchange.current(req);
    String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    // The filter refused a JSON body that does not parse (400 VALIDATION.malformed_json) before this ran. The
    // problems below are deterministic 4xx answers: they are kept and replayed like a success.
    if (!Fingerprinter.isJsonMediaType(req.getContentType())) {
      Problem.of(ProblemCode.MEDIA_TYPE).withTitle("Orders are JSON")
          .withDetail("send Content-Type: application/json").write(resp);
      return;
    }
    if (!body.trim().startsWith("{")) {
      Problem.of(NOT_AN_ORDER).withDetail("send a JSON object").write(resp);
      return;
    }
    String id = "ord_" + UuidV7.next();
    Connection tx = JdbcTransaction.connectionOf(exchange.transaction()); // do not commit or close it
    try (PreparedStatement insert = tx.prepareStatement(
        "INSERT INTO example_order (id, tenant, idem_key, body) VALUES (?, ?, ?, ?)")) {
      insert.setString(1, id);
      insert.setString(2, exchange.scope().value());
      insert.setString(3, exchange.key().value());
      insert.setString(4, body);
      insert.executeUpdate();
    } catch (SQLException e) {
      throw new IOException("inserting order " + id + " failed", e);
    }
    resp.setStatus(201);
    resp.setContentType("application/json");
    resp.setHeader("Location", "/orders/" + id);
    resp.getOutputStream().write(orderJson(id, exchange.scope().value(), body).getBytes(StandardCharsets.UTF_8));
  }

  @Override
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String tenant = req.getHeader(PlainServletApp.TENANT_HEADER);
    if (tenant == null || tenant.isEmpty()) {
      Problem.of(ProblemCode.UNAUTHENTICATED)
          .withDetail("send the " + PlainServletApp.TENANT_HEADER + " header").write(resp);
      return;
    }
    String path = req.getPathInfo();
    String one = path == null || path.equals("/") ? null : path.substring(1);
    StringBuilder json = new StringBuilder();
    String sql = "SELECT id, tenant, body FROM example_order WHERE tenant = ?"
        + (one == null ? " ORDER BY id" : " AND id = ?");
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, tenant);
      if (one != null) {
        ps.setString(2, one);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          json.append(json.length() == 0 ? "" : ",").append(orderJson(rs.getString(1), rs.getString(2),
              rs.getString(3)));
        }
      }
    } catch (SQLException e) {
      throw new IOException("reading orders failed", e);
    }
    if (one != null && json.length() == 0) {
      Problem.of(NO_SUCH_ORDER).write(resp);
      return;
    }
    resp.setContentType("application/json");
    resp.getOutputStream().write((one != null ? json.toString() : "{\"orders\":[" + json + "]}")
        .getBytes(StandardCharsets.UTF_8));
  }

  /** The order as JSON; the body was validated as JSON by the filter, the id and tenant are escaped. */
  static String orderJson(String id, String tenant, String body) {
    return "{\"id\":" + HttpBodies.jsonString(id) + ",\"tenant\":" + HttpBodies.jsonString(tenant)
        + ",\"order\":" + body + "}";
  }
}
