package dev.idem.examples.plainservlet;

import dev.idem.core.Checkpoint;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.StoredResponse;
import dev.idem.core.UuidV7;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.IdempotentExchange;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /shipments} in phased mode, because it calls another system (the {@link Carrier}): atomic mode would
 * hold a database transaction open across that call, and a rollback cannot take a booking back.
 *
 * <ol>
 *   <li>{@code create} (in the transaction that inserts the idempotency record): a shipment row, {@code requested};
 *   <li>{@code carrier} (outside any transaction): the booking, with a key derived from the request's key;
 *   <li>{@code confirm} (in a transaction): the row becomes {@code booked}; the answer is 201.
 * </ol>
 *
 * While the carrier call runs, the record is in progress: a duplicate gets 409 {@code CONFLICT.idempotency.in_progress}
 * with {@code Retry-After}, and a retry after the answer replays it.
 */
final class Shipments {
  static final String OPERATION = "POST /shipments";

  private Shipments() {}

  static PhasedOperation operation(Carrier carrier) {
    return PhasedOperation.builder(OPERATION)
        .inTransaction("create", ctx -> {
          String id = "shp_" + UuidV7.next();
          byte[] body = ctx.request().orElseThrow().body();
          Connection tx = JdbcTransaction.connectionOf(ctx.transaction());
          try (PreparedStatement insert = tx.prepareStatement(
              "INSERT INTO example_shipment (id, tenant, body, status) VALUES (?, ?, ?, 'requested')")) {
            insert.setString(1, id);
            insert.setString(2, ctx.recordKey().scope().value());
            insert.setString(3, new String(body, StandardCharsets.UTF_8));
            insert.executeUpdate();
          }
          return PhaseResult.next(Checkpoint.empty().with("shipment_id", id));
        })
        .outside("carrier", ctx -> {
          String tracking = carrier.book(ctx.derivedKey("carrier"), ctx.checkpoint().require("shipment_id"));
          return PhaseResult.next(ctx.checkpoint().with("tracking", tracking));
        })
        .inTransaction("confirm", ctx -> {
          String id = ctx.checkpoint().require("shipment_id");
          String tracking = ctx.checkpoint().require("tracking");
          Connection tx = JdbcTransaction.connectionOf(ctx.transaction());
          try (PreparedStatement update = tx.prepareStatement(
              "UPDATE example_shipment SET status = 'booked', tracking = ? WHERE id = ?")) {
            update.setString(1, tracking);
            update.setString(2, id);
            update.executeUpdate();
          }
          String json = "{\"id\":" + HttpBodies.jsonString(id) + ",\"status\":\"booked\",\"tracking\":"
              + HttpBodies.jsonString(tracking) + "}";
          return PhaseResult.respond(StoredResponse.of(201, Map.of("Content-Type", List.of("application/json")),
              json.getBytes(StandardCharsets.UTF_8)));
        })
        .build();
  }

  /** Hands the request to the phased operation; the filter writes its answer with the contract's headers. */
  static final class Servlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      IdempotentExchange.current(req).phased(resp);
    }
  }
}
